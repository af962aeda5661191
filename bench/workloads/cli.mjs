// Workload 9: CLI latency. Wall time of `hearth --help`, `ps`, `sessions
// list` and `doctor` on a small store (the CLI from dist/, each spawned
// `spawns` times per round, the median taken), against `node -e 0` spawned
// the same way in the same round (the ceiling: Node starting and exiting).
// Beside the wall time, each command's CPU (user + system of its process,
// read as this process's waited-for children's), the counted cost a busy
// machine cannot hide (issue 44): a wall-time ratio that moves while the
// CPU ratio does not is the machine, not the command.
// The commands run on hearth's default configuration: every HEARTH_*
// variable but HEARTH_HOME is left out of their environment (one left behind
// by an earlier workload once cost each command ~50 ms in a full run: with
// anything to validate, the configuration loads its schema). What a home
// with a config.json pays for that is measured beside them: `sessions list`
// on a second home whose config.json sets one key (no target).
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openStore } from "../../dist/index.js";
import { childrenCpuMs } from "../lib/gateway-servers.mjs";
import { row } from "../lib/rows.mjs";
import { median } from "../lib/stats.mjs";
import { removeDir, tempDir } from "../lib/stores.mjs";

const CLI =
  process.env.HEARTH_BENCH_CLI ?? fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
export const CLI_COMMANDS = [["--help"], ["ps"], ["sessions", "list"], ["doctor"]];

/** One spawn: its wall time and its process's CPU, in ms. */
function spawnOnce(args, env) {
  const c0 = childrenCpuMs();
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  const ms = performance.now() - t0;
  if (r.status !== 0 && !(args.includes("doctor") && r.status === 4))
    throw new Error(`${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return { ms, cpuMs: childrenCpuMs() - c0 };
}

/** A small store at `home`: 20 sessions of one message each. */
async function smallStore(home) {
  const store = await openStore({ home });
  for (let i = 0; i < 20; i++) {
    const s = await store.sessions.create({ title: `s${i}` });
    await store.messages.append(s.id, { role: "user", content: `hello ${i}` });
  }
  await store.close();
}

/** This process's environment without hearth's configuration variables, at `home`. */
function defaultsEnv(home) {
  const env = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith("HEARTH_")) delete env[name];
  return { ...env, HEARTH_HOME: home };
}

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

export async function cliWorkload({ sizes, rounds, log }) {
  const spawns = sizes.cliSpawns;
  log(`12. CLI latency: ${CLI_COMMANDS.length} commands × ${spawns} spawns × ${rounds} rounds`);
  const home = tempDir("cli");
  const configured = tempDir("cli-configured");
  await smallStore(home);
  await smallStore(configured);
  writeFileSync(join(configured, "config.json"), '{ "gateway": { "port": 8787 } }\n', {
    mode: 0o600,
  });
  const env = defaultsEnv(home);
  const configuredEnv = defaultsEnv(configured);
  const withConfig = { ms: [], cpu: [] };
  const node = [];
  const nodeCpu = [];
  const per = CLI_COMMANDS.map(() => []);
  const perCpu = CLI_COMMANDS.map(() => []);
  try {
    for (let round = 0; round < rounds; round++) {
      const base = [];
      const got = CLI_COMMANDS.map(() => []);
      const configuredSpawns = [];
      // Interleaved: each command's spawns and node's alternate, so both see the same noise.
      for (let i = 0; i < spawns; i++) {
        base.push(spawnOnce(["-e", "0"], env));
        for (const [c, args] of CLI_COMMANDS.entries()) got[c].push(spawnOnce([CLI, ...args], env));
        configuredSpawns.push(spawnOnce([CLI, "sessions", "list"], configuredEnv));
      }
      // Wall: the median spawn. CPU: the mean, whose tick-sized steps average out over the spawns.
      node.push(median(base.map((s) => s.ms)));
      nodeCpu.push(mean(base.map((s) => s.cpuMs)));
      for (const [c, g] of got.entries()) {
        per[c].push(median(g.map((s) => s.ms)));
        perCpu[c].push(mean(g.map((s) => s.cpuMs)));
      }
      withConfig.ms.push(median(configuredSpawns.map((s) => s.ms)));
      withConfig.cpu.push(mean(configuredSpawns.map((s) => s.cpuMs)));
      log(
        `  round ${round + 1}/${rounds}: node -e 0 ${node.at(-1).toFixed(0)} ms (CPU ${nodeCpu.at(-1).toFixed(0)}); ${CLI_COMMANDS.map((a, c) => `${a.join(" ")} ${per[c].at(-1).toFixed(0)} ms (CPU ${perCpu[c].at(-1).toFixed(0)})`).join(", ")}; sessions list with a config.json ${withConfig.ms.at(-1).toFixed(0)} ms (CPU ${withConfig.cpu.at(-1).toFixed(0)})`,
      );
    }
  } finally {
    removeDir(home);
    removeDir(configured);
  }
  const configuredRows = [
    ["", withConfig.ms, node],
    [": CPU of its process (user + system)", withConfig.cpu, nodeCpu],
  ].map(([what, hearth, ceiling]) =>
    row({
      workload: "12. CLI latency (small store)",
      metric: `hearth sessions list, a home with a config.json (its keys validated)${what}`,
      unit: "ms",
      better: "lower",
      hearth,
      ceiling,
      baselines: { ceiling: "node -e 0" },
    }),
  );
  return CLI_COMMANDS.flatMap((args, c) => [
    row({
      workload: "12. CLI latency (small store)",
      metric: `hearth ${args.join(" ")}`,
      unit: "ms",
      better: "lower",
      hearth: per[c],
      ceiling: node,
      baselines: { ceiling: "node -e 0" },
      target: { text: "≤ 2× node -e 0", kind: "ceiling", op: "<=", value: 2, basis: "median" },
    }),
    row({
      workload: "12. CLI latency (small store)",
      metric: `hearth ${args.join(" ")}: CPU of its process (user + system)`,
      unit: "ms",
      better: "lower",
      hearth: perCpu[c],
      ceiling: nodeCpu,
      baselines: { ceiling: "node -e 0" },
    }),
  ]).concat(configuredRows);
}
