/**
 * doctor checks the running services of the home: a gateway that runs is
 * asked its /v1/ready (ready: ok; not answering: error, exit 4); a
 * gateway that does not run is info, unless another process holds its
 * port (warning, naming it); a gateway whose descriptor limit is below
 * what its configuration needs is a warning.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { CLI, runCli } from "../../helpers/cli.js";
import { startGateway, writeConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { Child, run, spawnNode } from "../../helpers/process.js";

interface Finding {
  code: string;
  severity: string;
  message: string;
}

async function doctor(home: string, env?: NodeJS.ProcessEnv) {
  const r = await runCli(["--json", "doctor"], { home, ...(env ? { env } : {}) });
  const findings = (r.json().findings as Finding[]).filter((f) =>
    /^(service_|port_taken|nofile_low)/.test(f.code),
  );
  return { code: r.code, findings };
}

describe("doctor: the running services", () => {
  it("a running gateway is asked its /v1/ready; one that does not answer is an error", async () => {
    const home = tempHome();
    writeConfig(home, { gateway: { port: 0 }, scheduler: { port: 0 }, dashboard: { port: 0 } });
    const gw = await startGateway(home);
    const up = await doctor(home);
    expect(up.findings).toContainEqual(
      expect.objectContaining({
        code: "service_ready",
        severity: "ok",
        message: expect.stringContaining(`gateway pid ${gw.pid}`),
      }),
    );
    expect(up.findings).toContainEqual(
      expect.objectContaining({
        code: "service_down",
        message: expect.stringContaining("no scheduler"),
      }),
    );
    process.kill(gw.pid, "SIGSTOP");
    try {
      const stuck = await doctor(home);
      expect(stuck.code).toBe(4);
      expect(stuck.findings).toContainEqual(
        expect.objectContaining({ code: "service_unreachable", severity: "error" }),
      );
    } finally {
      process.kill(gw.pid, "SIGCONT");
    }
  });

  it("a port held by another process is a warning naming it", async () => {
    const holder = spawnNode([
      "-e",
      'const s = require("node:net").createServer(); s.listen(0, "127.0.0.1", () => console.log(s.address().port));',
    ]);
    const port = Number(await holder.line((l) => /^\d+$/.test(l), "the port"));
    const home = tempHome();
    writeConfig(home, { gateway: { port }, scheduler: { port: 0 }, dashboard: { port: 0 } });
    await (await openStore({ home, env: {} })).close(); // a store to diagnose
    // The tests' environment sets every port to 0 (vitest.config.ts): this one names it.
    const taken = await doctor(home, { HEARTH_GATEWAY_PORT: String(port) });
    expect(taken.code).toBe(4);
    expect(taken.findings).toContainEqual(
      expect.objectContaining({
        code: "port_taken",
        severity: "warning",
        message: expect.stringContaining(`port ${port} is taken by pid ${holder.pid}`),
      }),
    );
    await holder.kill();
  });

  // /proc/net/tcp is dear to read (the kernel walks its whole socket hash:
  // 5–10 ms on a large host), and doctor asks about three ports: it reads
  // each table once, not once per port (issue 44: doctor ≤ 2× node -e 0).
  it("three taken ports: each named, from one read of /proc/net/tcp and one walk of the holder's descriptors", async () => {
    const holder = spawnNode([
      "-e",
      `const net = require("node:net"); const ports = [];
       for (let i = 0; i < 3; i++) { const s = net.createServer(); s.listen(0, "127.0.0.1", () => { ports.push(s.address().port); if (ports.length === 3) console.log(ports.join(" ")); }); }`,
    ]);
    const ports = (await holder.line((l) => /^\d+ \d+ \d+$/.test(l), "the ports")).split(" ");
    const home = tempHome();
    writeConfig(home, { gateway: { port: 0 }, scheduler: { port: 0 }, dashboard: { port: 0 } });
    await (await openStore({ home, env: {} })).close();
    const out = join(home, "..", "doctor-trace.txt");
    const r = await run(
      "strace",
      [
        ...["-f", "-e", "trace=openat", "-o", out],
        process.execPath,
        CLI,
        "--home",
        home,
        "--json",
        "doctor",
      ],
      {
        env: {
          HEARTH_GATEWAY_PORT: ports[0]!,
          HEARTH_SCHEDULER_PORT: ports[1]!,
          HEARTH_DASHBOARD_PORT: ports[2]!,
        },
      },
    );
    await holder.kill();
    expect(r.code, r.stderr).toBe(4);
    const taken = (JSON.parse(r.stdout).findings as Finding[]).filter(
      (f) => f.code === "port_taken",
    );
    expect(taken.map((f) => f.message)).toEqual(
      ports.map((port) => expect.stringContaining(`port ${port} is taken by pid ${holder.pid}`)),
    );
    const opened = [...readFileSync(out, "utf8").matchAll(/openat\(AT_FDCWD, "([^"]+)"/g)].map(
      (m) => m[1],
    );
    const count = (path: string) => opened.filter((p) => p === path).length;
    expect(count("/proc/net/tcp")).toBe(1);
    expect(count("/proc/net/tcp6")).toBe(1);
    expect(count(`/proc/${holder.pid}/fd`)).toBe(1);
  });

  it("a gateway whose descriptor limit is below what it needs is a warning", async () => {
    const home = tempHome();
    writeConfig(home, {
      gateway: { port: 0, maxConnections: 4096 },
      scheduler: { port: 0 },
      dashboard: { port: 0 },
    });
    const gw = new Child("sh", [
      "-c",
      `ulimit -n 1024 && exec "${process.execPath}" "${CLI}" --home "${home}" gateway run`,
    ]);
    await gw.json((e: { event?: string }) => e.event === "gateway.ready", "gateway.ready");
    const low = await doctor(home);
    expect(low.findings).toContainEqual(
      expect.objectContaining({
        code: "nofile_low",
        severity: "warning",
        message: expect.stringContaining("may open only 1024"),
      }),
    );
    await gw.stop(30_000);
  });
});
