// Workload 9: the dashboard.
//
// 9a. Its JSON API on a large store (100,000 sessions / 1,000,000 messages in
//     full mode; dashboard-api.mjs), in this process: the dashboard (startDashboard from dist/)
//     answers through Fastify's inject (its whole pipeline: Host, session and
//     CSRF hooks, validation, handler, JSON) and its ceiling is the store's
//     own calls doing the same work on a reader store of the same process.
//     Pages: the session list (a keyset page of 50 at a random place), one
//     session (detail + its newest 100 messages), search (50 hits).
// 9b. A real `hearth dashboard run` process serving, at once, a 10,000-message
//     transcript (paged through, 200 at a time), its export (JSONL), searches
//     and a live stream (a writer appends beside it): its event-loop lateness,
//     measured inside it (GET /api/debug/event-loop, monitorEventLoopDelay).
// 9c. Gateway turn throughput (8 clients, WAL+FULL, group commit) with a
//     dashboard on the same store streaming every message live to one
//     browser, against the same gateway without a dashboard.
// 9d. The web app in a real Chromium on the same store (dashboard-browser.mjs):
//     first load (time, bytes over the wire), a 20,000-message transcript's
//     scroll frames, and the JS heap after 100 and 20,000 messages scrolled.
import os from "node:os";
import { openStore } from "../../dist/index.js";
import { queries } from "../lib/corpus.mjs";
import { dashboardProcess } from "../lib/dashboard-process.mjs";
import { cpuMs, startServer } from "../lib/gateway-servers.mjs";
import { startChild } from "../lib/procs.mjs";
import { quietMachine } from "../lib/quiet-machine.mjs";
import { row } from "../lib/rows.mjs";
import { rotate } from "../lib/stats.mjs";
import { bulkFill, newStore, storeSize } from "../lib/stores.mjs";
import { apiRounds, apiRows } from "./dashboard-api.mjs";
import { browserRounds, browserRows } from "./dashboard-browser.mjs";
import { measureWindow, TURNS_PER_CHAT } from "./gateway.mjs";

const LONG = 10_000;
/** The transcript the browser scrolls through (9d). */
const BROWSER_LONG = 20_000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Build the dashboard's store: bulk sessions and messages, and one 10,000-message session. */
async function buildStore({ sessions, messages, log }) {
  const t0 = performance.now();
  const { home, path } = await newStore("dashboard", "full");
  let shown = 0;
  bulkFill(path, {
    total: messages,
    sessions,
    seed: 9,
    onProgress: (done, total) => {
      if (done - shown >= total / 4 || done === total) {
        shown = done;
        log(`  generating: ${done.toLocaleString("en-US")} / ${total.toLocaleString("en-US")}`);
      }
    },
  });
  const store = await openStore({ home });
  let longId;
  let browserId;
  try {
    longId = (await store.sessions.create({ source: "bench", title: "long" })).id;
    for (let i = 0; i < LONG; i += 1000) {
      await store.messages.appendBatch(
        longId,
        Array.from({ length: 1000 }, (_, j) => ({
          role: (i + j) % 2 ? "assistant" : "user",
          content: `long transcript message ${i + j} ${"with some words ".repeat(8)}`,
        })),
      );
    }
    browserId = (await store.sessions.create({ source: "bench", title: "twenty thousand" })).id;
    for (let i = 0; i < BROWSER_LONG; i += 1000) {
      await store.messages.appendBatch(
        browserId,
        Array.from({ length: 1000 }, (_, j) => ({
          role: (i + j) % 2 ? "assistant" : "user",
          content: `message ${i + j}: ${"lorem ipsum dolor sit amet\n".repeat(1 + ((i + j) % 7))}`,
        })),
      );
    }
  } finally {
    await store.close();
  }
  const seconds = (performance.now() - t0) / 1000;
  log(
    `  dashboard store: ${sessions.toLocaleString("en-US")} sessions, ${(messages + LONG + BROWSER_LONG).toLocaleString("en-US")} messages, ${(storeSize(path) / 2 ** 20).toFixed(0)} MiB, built in ${seconds.toFixed(1)} s`,
  );
  return { home, path, longId, browserId, seconds };
}

async function lateness({ home, longId, rounds, loadMs, log }) {
  const dash = await dashboardProcess(home);
  const writer = await openStore({ home });
  const words = queries(77, 500);
  const out = { loaded: [], idle: [], p99: [], requests: [] };
  try {
    for (let round = 0; round < rounds; round++) {
      // Idle lateness first, over the same span: the figure the load is compared with.
      await dash.get("/api/debug/event-loop?reset=true");
      await sleep(loadMs);
      out.idle.push(JSON.parse(await dash.get("/api/debug/event-loop?reset=true")).maxMs);
      // A session page open on the transcript being appended to, and a sessions list.
      const live = await dash.live({ watch: `default/${longId}` });
      const listView = await dash.live({ list: true });
      const until = Date.now() + loadMs;
      let requests = 0;
      const loop = async (fn) => {
        while (Date.now() < until) {
          await fn();
          requests++;
        }
      };
      const base = `/api/sessions/default/${encodeURIComponent(longId)}`;
      let w = 0;
      await Promise.all([
        loop(async () => {
          // The whole 10,000-message transcript, page by page (the 'load older' path).
          let before = "";
          for (;;) {
            const page = JSON.parse(await dash.get(`${base}/messages?limit=200${before}`));
            if (page.nextBefore === null) break;
            before = `&before=${page.nextBefore}`;
          }
        }),
        loop(() => dash.get(`${base}/export?format=jsonl`)),
        loop(() => dash.get(`/api/search?limit=50&q=${encodeURIComponent(words[w++ % 500])}`)),
        loop(async () => {
          await writer.messages.append(longId, { role: "user", content: `live ${w}` });
          await sleep(20);
        }),
      ]);
      const loop2 = JSON.parse(await dash.get("/api/debug/event-loop?reset=true"));
      out.loaded.push(loop2.maxMs);
      out.p99.push(loop2.p99Ms);
      out.requests.push(requests);
      const frames = live.frames();
      await live.close();
      await listView.close();
      log(
        `  9b round ${round + 1}/${rounds}: max lateness ${loop2.maxMs} ms under load (p99 ${loop2.p99Ms}), idle ${out.idle.at(-1)} ms; ${requests} requests and appends, ${frames} live frames`,
      );
    }
  } finally {
    await writer.close();
    await dash.stop();
  }
  return out;
}

async function gatewayWithDashboard({ rounds, ms, warmMs, log }) {
  const clients = [0, 1].map((p) =>
    startChild("gateway-client.mjs", { seed: 900 + p, turnsPerChat: TURNS_PER_CHAT }),
  );
  const res = { with: [], without: [], cpuShare: [] };
  try {
    await Promise.all(clients.map((c) => c.line((l) => l.ready === true)));
    for (let round = 0; round < rounds; round++) {
      for (const variant of rotate(["without", "with"], round)) {
        const server = await startServer({ synchronous: "full", groupCommit: true });
        let dash;
        let live;
        try {
          if (variant === "with") {
            dash = await dashboardProcess(server.home);
            // A browser on the sessions list, as the web app behaves there: it refetches the
            // first page after each change.
            live = await dash.live({ list: true });
          }
          const dashCpu0 = dash ? cpuMs(dash.pid) : 0;
          const w = await measureWindow(clients, {
            ...server,
            n: 8,
            tag: `d${round}-${variant}`,
            warmMs,
            ms,
          });
          if (w.errors) throw new Error(`gateway requests failed: ${w.lastError}`);
          res[variant].push(w.msgPerSec);
          if (live) {
            // CPU is what a dashboard takes from a gateway on a shared machine: its CPU per turn
            // (warm-up included: an upper bound) against the gateway's own, less noisy than msg/s.
            const turns = (w.msgPerSec * (ms / 1000)) / 2;
            const share = (cpuMs(dash.pid) - dashCpu0) / turns / w.cpuPerTurn;
            res.cpuShare.push(share);
            log(
              `    live frames seen by the browser: ${live.frames()}; dashboard CPU per turn ${(100 * share).toFixed(1)}% of the gateway's`,
            );
          }
        } finally {
          await live?.close();
          await dash?.stop();
          await server.stop();
        }
      }
      log(
        `  9c round ${round + 1}/${rounds}: acked msg/s with a live dashboard ${Math.round(res.with.at(-1))}, without ${Math.round(res.without.at(-1))}`,
      );
    }
  } finally {
    await Promise.all(clients.map((c) => c.stop()));
  }
  return res;
}

export async function dashboardWorkload({ sizes, rounds, log }) {
  const { dashSessions: sessions, dashMessages: messages } = sizes;
  log(
    `9. dashboard: API on ${sessions.toLocaleString("en-US")} sessions / ${messages.toLocaleString("en-US")} messages, lateness under load, gateway with a live dashboard × ${rounds} rounds`,
  );
  const built = await buildStore({ sessions, messages, log });
  sizes.dashboardBuildSeconds = built.seconds;
  // The freshly built GiB is written back before the rounds start (full runs).
  if (sizes.warmup) await quietMachine();
  const api = await apiRounds({ ...built, sessions, rounds, calls: sizes.dashCalls, log });
  const late = await lateness({ ...built, rounds, loadMs: sizes.dashLoadMs, log });
  const gw = await gatewayWithDashboard({
    rounds: Math.min(rounds, sizes.gatewayRounds),
    ms: sizes.dashGatewayMs,
    warmMs: sizes.gatewayWarmMs,
    log,
  });
  const load0 = os.loadavg()[0];
  const browser = await browserRounds({
    home: built.home,
    longId: built.browserId,
    long: BROWSER_LONG,
    rounds,
    log,
  });
  const loadNote = `load average (1 min) ${load0.toFixed(1)} before the browser rounds, ${os.loadavg()[0].toFixed(1)} after, on ${os.cpus().length} CPUs`;
  const full = sessions >= 100_000 && messages >= 1_000_000;
  const scope = full ? "" : " at 100k sessions / 1M messages (not judged here)";
  const workload = `9. dashboard (${sessions.toLocaleString("en-US")} sessions, ${(messages + LONG + BROWSER_LONG).toLocaleString("en-US")} messages)`;
  const { judged, costs } = apiRows({ workload, api, full, scope });
  return [
    ...judged,
    row({
      workload,
      metric:
        "max event-loop lateness serving a 10k transcript, an export, searches and a live stream at once",
      unit: "ms",
      better: "lower",
      hearth: late.loaded,
      ceiling: late.idle,
      baselines: { ceiling: "the same dashboard idle, same span" },
      target: { text: "< 50 ms every round", kind: "absolute", op: "<", value: 50, basis: "worst" },
    }),
    row({
      workload,
      metric: "gateway acked messages/s (8 clients, WAL+FULL) with a dashboard streaming live",
      unit: "msg/s",
      better: "higher",
      hearth: gw.with,
      ceiling: gw.without,
      baselines: { ceiling: "the same gateway, no dashboard" },
      target: {
        text: ">= 0.95× without a dashboard",
        kind: "ceiling",
        op: ">=",
        value: 0.95,
        basis: "median",
      },
    }),
    ...costs,
    ...browserRows({ workload, browser, long: BROWSER_LONG, note: loadNote }),
  ];
}
