// Workload 9a: the dashboard's API against the store's own calls, in one
// process: the session list page, one session's page and a search, each
// through the dashboard's routes (fastify inject, logged in) and as the
// store calls the routes make (the ceiling). Latencies (p50, p95) and the
// counted cost per call: this process's CPU (every thread) and system calls.
import { MARKS } from "../../dist/dashboard/sessions/search.js";
import { openStore } from "../../dist/index.js";
import { queries } from "../lib/corpus.mjs";
import { costMeter } from "../lib/io-counters.mjs";
import { row } from "../lib/rows.mjs";
import { quantile, rotate } from "../lib/stats.mjs";

const cursorOf = (s) => Buffer.from(JSON.stringify([s.lastActivityAt, s.id])).toString("base64url");

/** n timed calls of fn(i); per-call latencies in ms. */
async function timed(n, fn) {
  const out = new Array(n);
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn(i);
    out[i] = performance.now() - t0;
  }
  return out;
}

export async function apiRounds({ home, longId, sessions, rounds, calls, log }) {
  const { startDashboard } = await import("../../dist/dashboard/daemon.js");
  // Any free port: the dashboard reads its configuration (the environment included) as it
  // starts; the variable goes at once, so no later `hearth` this process spawns sees it.
  const previous = process.env.HEARTH_DASHBOARD_PORT;
  process.env.HEARTH_DASHBOARD_PORT = "0";
  let dash;
  try {
    dash = await startDashboard({ home, profiles: ["default"], logLevel: "silent" });
  } finally {
    if (previous === undefined) delete process.env.HEARTH_DASHBOARD_PORT;
    else process.env.HEARTH_DASHBOARD_PORT = previous;
  }
  // The ceiling is the store's own calls in the configuration the dashboard runs them: with
  // reader threads (store.readerThreads), so a search is the same thread hop on both sides.
  const reader = await openStore({ home, role: "reader", readerThreads: true });
  const link = new URL(dash.login);
  const host = new URL(dash.address).host;
  const login = await dash.app.inject({
    url: link.pathname + link.search,
    headers: { host },
  });
  const cookie = String(login.headers["set-cookie"]).split(";")[0];
  const inject = async (url) => {
    const res = await dash.app.inject({ url, headers: { host, cookie } });
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
    return res.body;
  };
  // Random places in the list (keyset cursors) and random sessions, the same for both sides.
  const ids = Array.from({ length: calls }, (_, i) => `s-${(i * 7919) % sessions}`);
  const byId = new Map((await reader.browse.sessionsById(ids)).map((s) => [s.id, s]));
  const picks = ids.map((id, i) => (i % 10 === 9 ? longId : id));
  const words = queries(99, calls);
  const work = {
    list: {
      hearth: (i) => inject(`/api/sessions?limit=50&cursor=${cursorOf(byId.get(ids[i]))}`),
      ceiling: (i) =>
        reader.browse.sessions({
          limit: 51,
          state: "visible",
          after: { lastActivityAt: byId.get(ids[i]).lastActivityAt, id: ids[i] },
        }),
    },
    session: {
      hearth: async (i) => {
        const base = `/api/sessions/default/${encodeURIComponent(picks[i])}`;
        await inject(base);
        await inject(`${base}/messages?limit=100`);
      },
      ceiling: async (i) => {
        const s = await reader.sessions.require(picks[i]);
        if (s.parentId) await reader.sessions.get(s.parentId);
        await reader.browse.children(picks[i]);
        await reader.browse.transcript(picks[i], { limit: 100 });
      },
    },
    search: {
      hearth: (i) => inject(`/api/search?limit=50&q=${encodeURIComponent(words[i])}`),
      // The store call the route makes for a first page of 50: one hit more than
      // the page (whether there is a next one) and the route's match marks.
      ceiling: (i) => reader.search(words[i], { limit: 51, includeHistory: false, marks: MARKS }),
    },
  };
  const res = Object.fromEntries(
    Object.keys(work).map((k) => [
      k,
      {
        hearth: { p50: [], p95: [], cpuMs: [], syscalls: [] },
        ceiling: { p50: [], p95: [], cpuMs: [], syscalls: [] },
      },
    ]),
  );
  try {
    for (const side of ["hearth", "ceiling"])
      for (const w of Object.values(work)) await timed(20, w[side]); // warm-up
    for (let round = 0; round < rounds; round++) {
      const line = [];
      for (const [name, w] of Object.entries(work)) {
        for (const side of rotate(["hearth", "ceiling"], round)) {
          const cost = costMeter();
          const lat = await timed(calls, w[side]);
          const { cpuMs, syscalls } = cost.stop();
          res[name][side].p50.push(quantile(lat, 0.5));
          res[name][side].p95.push(quantile(lat, 0.95));
          // The counted cost per call (issue 44): CPU of this process, every thread, and its system calls.
          res[name][side].cpuMs.push(cpuMs / calls);
          res[name][side].syscalls.push(syscalls / calls);
        }
        line.push(
          `${name} p95 ${res[name].hearth.p95.at(-1).toFixed(2)}/${res[name].ceiling.p95.at(-1).toFixed(2)} ms`,
        );
      }
      log(`  9a round ${round + 1}/${rounds}: ${line.join(", ")} (API/store)`);
    }
  } finally {
    await reader.close();
    await dash.stop();
  }
  return res;
}

/** The API rows of `api` (apiRounds' result): the judged p95s, and the counted costs. */
export function apiRows({ workload, api, full, scope }) {
  const baselines = { ceiling: "the store's own calls, same process" };
  const apiRow = (name, metric, target) =>
    row({
      workload,
      metric,
      unit: "ms",
      better: "lower",
      hearth: api[name].hearth.p95,
      ceiling: api[name].ceiling.p95,
      baselines,
      ...(target ? { target } : {}),
    });
  const p95Target = {
    text: `< 50 ms${scope}`,
    kind: "absolute",
    op: "<",
    value: 50,
    basis: "median",
    applies: full,
  };
  const costRow = (name, what, field, metric, unit) =>
    row({
      workload,
      metric: `${what}: ${metric}`,
      unit,
      better: "lower",
      hearth: api[name].hearth[field],
      ceiling: api[name].ceiling[field],
      baselines,
    });
  const costs = [
    ["list", "API session list page (50)"],
    ["session", "API one-session page (detail + 100 newest)"],
    ["search", "API search (50 hits)"],
  ].flatMap(([name, what]) => [
    costRow(name, what, "cpuMs", "CPU per call (process.cpuUsage, every thread)", "ms"),
    costRow(name, what, "syscalls", "read + write system calls per call (/proc/self/io)", "calls"),
  ]);
  const judged = [
    apiRow("list", "API session list page (50), p95", p95Target),
    apiRow("session", "API one-session page (detail + 100 newest), p95", p95Target),
    apiRow("search", "API search (50 hits), p95", {
      text: "<= 1.11× the store's search (>= 0.9× its speed)",
      kind: "ceiling",
      op: "<=",
      value: 1 / 0.9,
      basis: "median",
    }),
  ];
  return { judged, costs };
}
