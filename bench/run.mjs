// hearth's benchmark suite. `npm run bench` (builds dist/ first), or
// `npm run bench -- --quick` for the under-a-minute smoke run; the options
// are in USAGE below (`node bench/run.mjs --help`).
import { existsSync } from "node:fs";
import os from "node:os";
import { parseArgs } from "node:util";
import { machine } from "./lib/machine.mjs";
import { methodMarkdown } from "./lib/method.mjs";
import { dropPgDatabases } from "./lib/pg.mjs";
import { onBenchPg } from "./lib/pg-embedded.mjs";
import { killChildren } from "./lib/procs.mjs";
import { quietMachine } from "./lib/quiet-machine.mjs";
import { consoleTable, writeDocs, writeJson } from "./lib/report.mjs";
import { cleanupAll, removeDir } from "./lib/stores.mjs";
import { adaptersWorkload } from "./workloads/adapters.mjs";
import { appendWorkloads } from "./workloads/append.mjs";
import { cliWorkload } from "./workloads/cli.mjs";
import { dashboardWorkload } from "./workloads/dashboard.mjs";
import { gatewayWorkload } from "./workloads/gateway.mjs";
import { importWorkload } from "./workloads/import.mjs";
import { maintenanceWorkload } from "./workloads/maintenance.mjs";
import { memoryWorkload } from "./workloads/memory.mjs";
import { mixedWorkload } from "./workloads/mixed.mjs";
import { pgCostWorkload } from "./workloads/pg-cost.mjs";
import { postgresWorkload } from "./workloads/postgres.mjs";
import { postgresGatewayWorkload } from "./workloads/postgres-gateway.mjs";
import { profilesWorkload } from "./workloads/profiles.mjs";
import { readersWorkload } from "./workloads/readers.mjs";
import { replicateWorkload } from "./workloads/replicate.mjs";
import { resumeWorkload } from "./workloads/resume.mjs";
import { scalingWorkload } from "./workloads/scaling.mjs";
import { buildLargeStore, searchWorkload } from "./workloads/search.mjs";
import { tailWorkload } from "./workloads/tail.mjs";

const SIZES = {
  full: {
    rounds: 5,
    mixedRounds: 5,
    maintenanceRounds: 3,
    warmup: true,
    appendTotal: 20_000,
    naiveAppends: 500,
    batchTotal: 5_000,
    mixedMs: 3_000,
    resumeLoads: 15,
    largeMessages: 1_000_000,
    largeSessions: 5_000,
    searchQueries: 200,
    optimizeMessages: 100_000,
    gatewayRounds: 5,
    gatewayClients: [1, 8, 64],
    gatewayMs: 1_500,
    gatewayWarmMs: 500,
    gatewaySettleMs: 1_000,
    dashSessions: 100_000,
    dashMessages: 1_000_000,
    dashCalls: 200,
    dashLoadMs: 3_000,
    dashGatewayMs: 1_500,
    readerMessages: 100_000,
    readerMs: 2_000,
    adapterCalls: 2_000,
    langgraphTurns: 100,
    cliSpawns: 9,
    tailCalls: 500,
    tailLargeMessages: 1_000_000,
    memRounds: 2,
    memTurns: 100_000,
    memSessions: 1_000,
    memBaseTurns: 1_000,
    memSettleMs: 2_000,
    scalingSizes: [10_000, 100_000, 1_000_000, 3_000_000],
    scalingRounds: 3,
    scalingQueries: 150,
    scalingTails: 300,
    scalingAppends: 500,
    profileCounts: [1, 10, 50, 100, 200, 500],
    profileRounds: 2,
    pgAppends: 1_000,
    pgBatchTotal: 6_000,
    pgTailMessages: 10_000,
    pgTailCalls: 300,
    pgSearchMessages: 100_000,
    pgSearchQueries: 200,
    pgGatewayClients: 64,
    pgGatewayMs: 2_000,
    pgGatewayRounds: 5,
    pgCostMs: 5_000,
    pgCostWarmMs: 2_000,
    importMessages: 1_000_000,
    replicateAppends: 5_000,
  },
  quick: {
    rounds: 3,
    mixedRounds: 2,
    maintenanceRounds: 2,
    warmup: false,
    appendTotal: 900,
    naiveAppends: 60,
    batchTotal: 1_000,
    mixedMs: 1_000,
    resumeLoads: 5,
    largeMessages: 30_000,
    largeSessions: 150,
    searchQueries: 60,
    optimizeMessages: 10_000,
    gatewayRounds: 2,
    gatewayClients: [64],
    gatewayMs: 400,
    gatewayWarmMs: 200,
    gatewaySettleMs: 300,
    dashSessions: 2_000,
    dashMessages: 20_000,
    dashCalls: 60,
    dashLoadMs: 1_000,
    dashGatewayMs: 400,
    readerMessages: 10_000,
    readerMs: 600,
    adapterCalls: 300,
    langgraphTurns: 20,
    cliSpawns: 3,
    tailCalls: 200,
    tailLargeMessages: 100_000,
    memRounds: 1,
    memTurns: 10_000,
    memSessions: 100,
    memBaseTurns: 1_000,
    memSettleMs: 500,
    scalingSizes: [2_000, 10_000],
    scalingRounds: 2,
    scalingQueries: 30,
    scalingTails: 50,
    scalingAppends: 50,
    profileCounts: [1, 10, 50],
    profileRounds: 1,
    pgAppends: 30,
    pgBatchTotal: 200,
    pgTailMessages: 2_000,
    pgTailCalls: 30,
    pgSearchMessages: 2_000,
    pgSearchQueries: 20,
    pgGatewayClients: 64,
    pgGatewayMs: 400,
    pgGatewayRounds: 1,
    pgCostMs: 2_000,
    pgCostWarmMs: 1_000,
    importMessages: 20_000,
    replicateAppends: 500,
  },
};
const ALL = [
  "append",
  "replicate",
  "gateway",
  "mixed",
  "resume",
  "search",
  "maintenance",
  "dashboard",
  "readers",
  "adapters",
  "cli",
  "tail",
  "memory",
  "scaling",
  "profiles",
  "postgres",
  "pg-cost",
  "import",
];

const USAGE = `usage: node bench/run.mjs [--quick] [--rounds N] [--only LIST] [--scaling-max N] [--docs | --no-docs]
  --quick          small sizes, 3 rounds; writes bench/results/<date>-quick.json
  --rounds N       rounds per workload (default 5, quick 3)
  --only LIST      comma-separated workloads: ${ALL.join(", ")}
  --scaling-max N  the scaling workload stops at N messages
  --docs           also rewrite docs/benchmarks.md in a quick or partial run
  --no-docs        never rewrite docs/benchmarks.md`;

let args;
try {
  ({ values: args } = parseArgs({
    options: {
      help: { type: "boolean", short: "h", default: false },
      quick: { type: "boolean", default: false },
      rounds: { type: "string" },
      only: { type: "string" },
      docs: { type: "boolean" },
      "no-docs": { type: "boolean", default: false },
      "scaling-max": { type: "string" },
    },
  }));
} catch (err) {
  console.error(`${err.message}\n${USAGE}`);
  process.exit(2);
}
if (args.help) {
  console.log(USAGE);
  process.exit(0);
}
if (!existsSync(new URL("../dist/index.js", import.meta.url))) {
  console.error("dist/ is missing: run `npm run bench` (it builds first) or `npm run build`");
  process.exit(2);
}
const mode = args.quick ? "quick" : "full";
const sizes = { ...SIZES[mode], mode };
const rounds = args.rounds ? Number(args.rounds) : sizes.rounds;
if (!Number.isInteger(rounds) || rounds < 1)
  throw new RangeError("--rounds must be a positive integer");
sizes.rounds = rounds;
if (args["scaling-max"] !== undefined) {
  const max = Number(args["scaling-max"]);
  if (!Number.isInteger(max) || max < 1)
    throw new RangeError("--scaling-max must be a positive integer (messages)");
  const kept = sizes.scalingSizes.filter((n) => n <= max);
  sizes.scalingSizes = kept.length > 0 ? kept : [max];
}
const only = args.only ? args.only.split(",").map((s) => s.trim()) : ALL;
for (const name of only)
  if (!ALL.includes(name)) throw new RangeError(`--only: unknown workload ${name}`);

const started = performance.now();
const log = (message) =>
  console.error(`[${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s] ${message}`);

/**
 * Puts process.env back as `saved` had it; returns the names that differed.
 * A workload's variable must not reach the next workloads' children: the
 * dashboard API rounds once left HEARTH_DASHBOARD_PORT=0 behind, and every
 * later `hearth` spawn validated its configuration (zod: ~50 ms of CPU more
 * per CLI command in workload 12 of a full run than alone).
 */
function restoreEnv(saved) {
  const changed = [];
  for (const name of Object.keys(process.env)) {
    if (!(name in saved)) {
      changed.push(name);
      delete process.env[name];
    }
  }
  for (const [name, value] of Object.entries(saved)) {
    if (process.env[name] !== value) {
      changed.push(name);
      process.env[name] = value;
    }
  }
  return changed;
}

async function main() {
  const info = await machine();
  log(
    `hearth bench, ${mode} run, ${rounds} rounds; ${info.cpuModel} × ${info.cpuCount}, load ${info.loadAverage.join(" ")}`,
  );
  const rows = [];
  const errors = [];
  const quiet = {}; // per workload: how long the machine took to quieten before it
  const step = async (name, fn) => {
    if (!only.includes(name)) return;
    // A quick run (the smoke run, also run beside other work) does not wait.
    if (mode !== "quick") {
      const q = await quietMachine();
      quiet[name] = {
        quiet: q.quiet,
        waitedMs: Math.round(q.waitedMs),
        busy: Math.round(q.busy * 1000) / 1000,
        unwrittenMiB: Math.round(q.unwrittenMiB),
      };
      log(
        `${name}: machine ${q.quiet ? "quiet" : "NOT quiet"} after ${(q.waitedMs / 1000).toFixed(1)} s (CPUs ${(q.busy * 100).toFixed(0)}% busy, ${q.unwrittenMiB.toFixed(0)} MiB dirty or in writeback)`,
      );
    }
    const env = { ...process.env };
    try {
      rows.push(...(await fn()));
    } catch (err) {
      errors.push({ workload: name, error: String(err?.stack ?? err) });
      log(`${name} failed: ${err?.stack ?? err}`);
      await killChildren();
    } finally {
      const changed = restoreEnv(env);
      if (changed.length > 0)
        log(`${name}: put back the environment it changed (${changed.join(", ")})`);
    }
  };
  await step("append", () => appendWorkloads({ sizes, rounds, log }));
  await step("replicate", () => replicateWorkload({ sizes, rounds, log }));
  let footprint = []; // workload 8's rows, measured with 3, listed after 7
  await step("gateway", async () => {
    const r = await gatewayWorkload({
      sizes,
      rounds: Math.min(rounds, sizes.gatewayRounds),
      log,
    });
    footprint = r.footprintRows;
    return r.rows;
  });
  await step("mixed", () =>
    mixedWorkload({ sizes, rounds: Math.min(rounds, sizes.mixedRounds), log }),
  );
  await step("resume", () => resumeWorkload({ sizes, rounds, log }));
  let large;
  if (only.includes("search") || only.includes("maintenance")) {
    log(`building the large store (${sizes.largeMessages.toLocaleString("en-US")} messages)`);
    large = await buildLargeStore({
      messages: sizes.largeMessages,
      sessions: sizes.largeSessions,
      log,
    });
    sizes.largeBuildSeconds = large.buildSeconds;
  }
  await step("search", () => searchWorkload({ large, sizes, rounds, log }));
  const mRounds = Math.min(rounds, sizes.maintenanceRounds);
  await step("maintenance", () => maintenanceWorkload({ large, sizes, rounds: mRounds, log }));
  if (large) removeDir(large.home);
  await step("dashboard", () => dashboardWorkload({ sizes, rounds, log }));
  await step("readers", () => readersWorkload({ sizes, rounds, log }));
  await step("adapters", () => adaptersWorkload({ sizes, rounds, log }));
  await step("cli", () => cliWorkload({ sizes, rounds, log }));
  await step("tail", () => tailWorkload({ sizes, rounds, log }));
  await step("import", () => importWorkload({ sizes, rounds, log }));
  await step("memory", () =>
    memoryWorkload({ sizes, rounds: Math.min(rounds, sizes.memRounds), log }),
  );
  await step("scaling", () =>
    scalingWorkload({ sizes, rounds: Math.min(rounds, sizes.scalingRounds), log }),
  );
  await step("profiles", () =>
    profilesWorkload({ sizes, rounds: Math.min(rounds, sizes.profileRounds), log }),
  );
  // On $HEARTH_TEST_PG_URL's server when set, else on one of its own (as workload 18).
  await step("postgres", () =>
    onBenchPg(async () => [
      ...(await postgresWorkload({ sizes, rounds, log })),
      ...(await postgresGatewayWorkload({
        sizes,
        rounds: Math.min(rounds, sizes.pgGatewayRounds),
        log,
      })),
    ]),
  );
  await step("pg-cost", () =>
    pgCostWorkload({ sizes, rounds: Math.min(rounds, sizes.pgGatewayRounds), log }),
  );
  rows.push(...footprint);

  const date = new Date().toISOString().slice(0, 10);
  const durationSeconds = (performance.now() - started) / 1000;
  const partial = only.length !== ALL.length || args.rounds !== undefined;
  const command = `npm run bench${mode === "quick" ? " -- --quick" : ""}`;
  const result = {
    date,
    mode,
    rounds,
    command: partial ? `node bench/run.mjs ${process.argv.slice(2).join(" ")}` : command,
    sizes,
    machine: info,
    loadAfter: os.loadavg().map((v) => Math.round(v * 100) / 100),
    durationSeconds,
    quiet,
    rows,
    errors,
  };
  result.file = `${date}${mode === "quick" ? "-quick" : ""}.json`;
  console.log(consoleTable(rows));
  const path = writeJson(result);
  log(`wrote ${path}`);
  const docs = args["no-docs"] ? false : (args.docs ?? (mode === "full" && !partial));
  if (docs) {
    writeDocs(result, methodMarkdown({ ...sizes, cpuCount: info.cpuCount }));
    log("wrote docs/benchmarks.md and docs/benchmarks.svg");
  }
  log(
    `done in ${durationSeconds.toFixed(0)} s${errors.length ? `, ${errors.length} workload(s) failed` : ""}`,
  );
  if (errors.length) process.exitCode = 1;
}

try {
  await main();
} finally {
  await killChildren();
  await dropPgDatabases();
  cleanupAll();
}
