// Workload 9: CLI latency. Wall time of `hearth --help`, `ps`, `sessions
// list` and `doctor` on a small store (the CLI from dist/, each spawned
// `spawns` times per round, the median taken), against `node -e 0` spawned
// the same way in the same round (the ceiling: Node starting and exiting).
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { openStore } from "../../dist/index.js";
import { row } from "../lib/rows.mjs";
import { median } from "../lib/stats.mjs";
import { removeDir, tempDir } from "../lib/stores.mjs";

const CLI =
  process.env.HEARTH_BENCH_CLI ?? fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
export const CLI_COMMANDS = [["--help"], ["ps"], ["sessions", "list"], ["doctor"]];

function wall(args, env) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  const ms = performance.now() - t0;
  if (r.status !== 0 && !(args.includes("doctor") && r.status === 4))
    throw new Error(`${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return ms;
}

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
  const per = CLI_COMMANDS.map(() => []);
  try {
    for (let round = 0; round < rounds; round++) {
      const base = [];
      const got = CLI_COMMANDS.map(() => []);
      // Interleaved: each command's spawns and node's alternate, so both see the same noise.
      for (let i = 0; i < spawns; i++) {
        base.push(wall(["-e", "0"], env));
        for (const [c, args] of CLI_COMMANDS.entries()) got[c].push(wall([CLI, ...args], env));
      }
      node.push(median(base));
      for (const [c, g] of got.entries()) per[c].push(median(g));
      log(
        `  round ${round + 1}/${rounds}: node -e 0 ${node.at(-1).toFixed(0)} ms; ${CLI_COMMANDS.map((a, c) => `${a.join(" ")} ${per[c].at(-1).toFixed(0)} ms`).join(", ")}`,
      );
    }
  } finally {
    removeDir(home);
  }
  return CLI_COMMANDS.map((args, c) =>
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
  );
}
