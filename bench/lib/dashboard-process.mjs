// A real `hearth dashboard run` child process for workload 9 (bench/workloads/dashboard.mjs).
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const CLI = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

/** A real `hearth dashboard run` child on `home`; resolves once its readiness line is read. */
export async function dashboardProcess(home) {
  const child = spawn(process.execPath, [CLI, "--home", home, "dashboard", "run"], {
    env: { ...process.env, HEARTH_DASHBOARD_PORT: "0", HEARTH_LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += d.toString();
  });
  const ready = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).on("line", (l) => {
      try {
        const e = JSON.parse(l);
        if (e.event === "dashboard.ready") resolve(e);
      } catch {}
    });
    child.once("exit", (code) => reject(new Error(`dashboard exited ${code}\n${stderr}`)));
  });
  const login = await fetch(ready.login, { redirect: "manual" });
  const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0];
  return {
    pid: child.pid,
    // The session cookie of the login (name=value): a browser context can carry it.
    cookie,
    address: ready.address,
    get: async (path) => {
      const res = await fetch(`${ready.address}${path}`, { headers: { cookie } });
      const body = await res.text();
      if (!res.ok) throw new Error(`${path}: ${res.status} ${body}`);
      return body;
    },
    /**
     * Open the live stream as the web app does: `watch` (profile/id) as a
     * session page does; `list`: refetch the first sessions page after changes
     * (at most every 700 ms), as the sessions list does. Returns
     * { frames(), close() }.
     */
    live: async ({ watch, list = false } = {}) => {
      const controller = new AbortController();
      const path = watch ? `/api/events?watch=${encodeURIComponent(watch)}` : "/api/events";
      const res = await fetch(`${ready.address}${path}`, {
        headers: { cookie, accept: "text/event-stream" },
        signal: controller.signal,
      });
      let frames = 0;
      let timer;
      let lastRefresh = 0;
      let refetch = Promise.resolve();
      const decoder = new TextDecoder();
      const reading = (async () => {
        try {
          for await (const chunk of res.body) {
            const text = decoder.decode(chunk, { stream: true });
            frames += text.split("\n\n").length - 1;
            if (list && text.includes("event: change") && timer === undefined) {
              // As web/src/pages/Sessions.tsx: at most one refresh per 700 ms, 150 ms after a change at the earliest.
              const wait = Math.max(150, lastRefresh + 700 - Date.now());
              timer = setTimeout(() => {
                timer = undefined;
                lastRefresh = Date.now();
                refetch = fetch(`${ready.address}/api/sessions?limit=50`, {
                  headers: { cookie },
                  signal: controller.signal,
                })
                  .then((r) => r.text())
                  .catch(() => {});
              }, wait);
            }
          }
        } catch {}
      })();
      return {
        frames: () => frames,
        close: async () => {
          clearTimeout(timer);
          controller.abort();
          await reading;
          await refetch;
        },
      };
    },
    stop: async () => {
      child.kill("SIGTERM");
      await new Promise((r) => (child.exitCode !== null ? r() : child.once("exit", r)));
    },
  };
}
