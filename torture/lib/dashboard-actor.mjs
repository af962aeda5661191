// The dashboard of a torture run: started as `hearth dashboard run`, read
// and written (pins, renames, searches) the way a person at the console would.
import { prng } from "./prng.mjs";
import { Proc } from "./proc.mjs";
import { CLI, DAEMON_PORTS, START_MS, sleep } from "./spawn.mjs";

export async function startDashboard(a) {
  const t0 = Date.now();
  const proc = new Proc([CLI, "--home", a.home, "dashboard", "run"], {
    env: { ...DAEMON_PORTS, ...a.daemonEnv },
    name: "dashboard",
  });
  const d = { proc, address: "", cookie: "", expected: false };
  // The dashboard's own log line for its first failed request: the answer
  // to the client says only "see its log" for an unexpected error.
  proc.onStderr = (chunk) => {
    if (a.stats.dashboard.firstFailureLog) return;
    const line = chunk
      .split("\n")
      .find((l) => l.includes('"request failed"') && l.includes('"code":"HEARTH_INTERNAL"'));
    if (line) a.stats.dashboard.firstFailureLog = line.slice(0, 6000);
  };
  a.dashboard = d;
  a.dashboardReady = (async () => {
    let ready;
    try {
      ready = await proc.json((e) => e.event === "dashboard.ready", START_MS, "dashboard.ready");
    } catch (err) {
      a.stats.staleLockBlocks.push(`dashboard start failed: ${err.message}`);
      throw err;
    }
    const res = await fetch(ready.login, { redirect: "manual" });
    d.cookie = (res.headers.get("set-cookie") ?? "").split(";")[0];
    const me = await fetch(`${ready.address}/api/me`, { headers: { cookie: d.cookie } });
    d.csrf = (await me.json()).csrfToken;
    d.address = ready.address;
    return Date.now() - t0;
  })();
  return a.dashboardReady;
}

export async function dashboardLoop(a) {
  const rng = prng(a.seed * 31 + 1000);
  while (!a.stopping) {
    try {
      await a.dashboardReady;
    } catch {
      if (a.stats.staleLockBlocks.length > 0) return; // the run is failing already
      await sleep(50);
      continue;
    }
    const d = a.dashboard;
    if (!d.address) {
      await sleep(50);
      continue;
    }
    const get = async (path, change) => {
      a.stats.dashboard.requests++;
      if (change) a.stats.dashboard.writes++;
      try {
        const res = await fetch(`${d.address}${path}`, {
          headers: {
            cookie: d.cookie,
            ...(change
              ? { "x-csrf-token": d.csrf, "content-type": "application/json", origin: d.address }
              : {}),
          },
          ...(change ? { method: "PATCH", body: JSON.stringify(change) } : {}),
          signal: AbortSignal.timeout(20_000),
        });
        const body = await res.json().catch(() => undefined);
        if (res.status === 200) a.stats.dashboard.ok++;
        else {
          // A damaged store (p1/p2, before its repair) may answer 500: counted apart.
          const key = a.faults.label(`${res.status} ${body?.error?.code ?? ""}`.trim());
          a.stats.dashboard.errors[key] = (a.stats.dashboard.errors[key] ?? 0) + 1;
          // The first answer of each kind, so that an unexpected one can be diagnosed.
          a.stats.dashboard.firstMessages[key] ??= `${path}: ${body?.error?.message ?? ""}`;
        }
        return body;
      } catch (err) {
        const key = `error ${err.cause?.code ?? err.name}`;
        a.stats.dashboard.errors[key] = (a.stats.dashboard.errors[key] ?? 0) + 1;
        await sleep(50);
        return undefined;
      }
    };
    const list = await get("/api/sessions?limit=20");
    const sessions = list && Object.values(list).find((v) => Array.isArray(v));
    const one = sessions?.length ? sessions[rng.int(0, sessions.length - 1)] : undefined;
    if (one?.id) await get(`/api/sessions/default/${one.id}/messages?limit=50`);
    // Row writes as a person makes them: pin or unpin, rename (never delete).
    if (one?.id && rng.next() < 0.3) {
      const change =
        rng.next() < 0.5
          ? { pinned: rng.next() < 0.5 }
          : { title: `renamed ${a.seed}-${rng.int(0, 1e9)}` };
      await get(`/api/sessions/default/${one.id}`, change);
    }
    await get(`/api/sessions?q=${encodeURIComponent(`message g${rng.int(0, 2)}`)}&limit=10`);
    await sleep(rng.int(50, 300));
  }
}
