// Workload 9: CLI latency. Wall time of `hearth --help`, `ps`, `sessions
// list` and `doctor` on a small store (the CLI from dist/, each spawned
// `spawns` times per round, the median taken), against `node -e 0` spawned
// the same way in the same round (the ceiling: Node starting and exiting).
// Beside the wall time, each command's CPU (user + system of its process,
// read as this process's waited-for children's), the counted cost a busy
// machine cannot hide (issue 44): a wall-time ratio that moves while the
// CPU ratio does not is the machine, not the command.
import { spawnSync } from "node:child_process";
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

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

export async function cliWorkload({ sizes, rounds, log }) {
  const spawns = sizes.cliSpawns;
  log(`12. CLI latency: ${CLI_COMMANDS.length} commands × ${spawns} spawns × ${rounds} rounds`);
  const home = tempDir("cli");
  const store = await openStore({ home });
  for (let i = 0; i < 20; i++) {
    const s = await store.sessions.create({ title: `s${i}` });
    await store.messages.append(s.id, { role: "user", content: `hello ${i}` });
  }
  await store.close();
  const env = { ...process.env, HEARTH_HOME: home };
  const node = [];
  const nodeCpu = [];
  const per = CLI_COMMANDS.map(() => []);
  const perCpu = CLI_COMMANDS.map(() => []);
  try {
    for (let round = 0; round < rounds; round++) {
      const base = [];
      const got = CLI_COMMANDS.map(() => []);
      // Interleaved: each command's spawns and node's alternate, so both see the same noise.
      for (let i = 0; i < spawns; i++) {
        base.push(spawnOnce(["-e", "0"], env));
        for (const [c, args] of CLI_COMMANDS.entries()) got[c].push(spawnOnce([CLI, ...args], env));
      }
      // Wall: the median spawn. CPU: the mean, whose tick-sized steps average out over the spawns.
      node.push(median(base.map((s) => s.ms)));
      nodeCpu.push(mean(base.map((s) => s.cpuMs)));
      for (const [c, g] of got.entries()) {
        per[c].push(median(g.map((s) => s.ms)));
        perCpu[c].push(mean(g.map((s) => s.cpuMs)));
      }
      log(
        `  round ${round + 1}/${rounds}: node -e 0 ${node.at(-1).toFixed(0)} ms (CPU ${nodeCpu.at(-1).toFixed(0)}); ${CLI_COMMANDS.map((a, c) => `${a.join(" ")} ${per[c].at(-1).toFixed(0)} ms (CPU ${perCpu[c].at(-1).toFixed(0)})`).join(", ")}`,
      );
    }
  } finally {
    removeDir(home);
  }
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
  ]);
}
