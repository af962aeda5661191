// Not a workload: CPU per single-message append at WAL+FULL (issue 44,
// workload 1's "CPU per message" row) for builds side by side, each run in
// a fresh process (bench/workers/append-cpu-child.mjs), rotated order,
// medians over the rounds.
// node bench/append-cpu.mjs [rounds=5] [count=4000] [warm=1000] [label=dist ...]
// e.g. node bench/append-cpu.mjs 5 4000 1000 base=/work/main/dist this=dist
// "ceiling" (the raw writer of bench/lib/sql.mjs) always runs too.
import { execFileSync } from "node:child_process";
import { loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const [roundsArg = "5", countArg = "4000", warmArg = "1000", ...builds] = process.argv.slice(2);
const kinds = [
  ...(builds.length ? builds : [`this=${join(here, "..", "dist")}`]).map((b) => {
    const [label, dist] = b.split("=");
    return { label, kind: "hearth", dist: resolve(dist) };
  }),
  { label: "ceiling", kind: "ceiling", dist: resolve(join(here, "..", "dist")) },
];
const results = Object.fromEntries(kinds.map((k) => [k.label, []]));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
console.error(
  `load before: ${loadavg()
    .map((x) => x.toFixed(1))
    .join(" ")}`,
);
for (let round = 0; round < Number(roundsArg); round++) {
  const order = kinds.map((_, i) => kinds[(i + round) % kinds.length]);
  for (const k of order) {
    const out = execFileSync(
      process.execPath,
      [join(here, "workers", "append-cpu-child.mjs"), k.kind, k.dist, warmArg, countArg],
      { encoding: "utf8" },
    );
    const r = JSON.parse(out.trim().split("\n").pop());
    results[k.label].push(r);
    const others = r.threads ? r.threads.others.reduce((a, b) => a + b, 0) : Number.NaN;
    console.error(
      `round ${round + 1} ${k.label}: cpu ${r.cpuUs.toFixed(1)} µs (user ${r.userUs.toFixed(1)}, sys ${r.sysUs.toFixed(1)}; main thread ${r.threads?.main.toFixed(0)}, others ${others.toFixed(0)}), wall ${r.wallUs.toFixed(1)} µs, minor faults ${r.minFlt.toFixed(2)}`,
    );
  }
}
console.error(
  `load after: ${loadavg()
    .map((x) => x.toFixed(1))
    .join(" ")}`,
);
const ceil = results.ceiling;
const summary = {};
for (const k of kinds) {
  const rs = results[k.label];
  const ratios = rs.map((r, i) => r.cpuUs / ceil[i].cpuUs);
  const wallRatios = rs.map((r, i) => ceil[i].wallUs / r.wallUs);
  summary[k.label] = {
    cpuUs: median(rs.map((r) => r.cpuUs)),
    userUs: median(rs.map((r) => r.userUs)),
    sysUs: median(rs.map((r) => r.sysUs)),
    wallUs: median(rs.map((r) => r.wallUs)),
    // /proc/self/task: the event loop's thread, and all the others (checkpoint thread, pool, V8's helpers).
    mainUs: median(rs.map((r) => r.threads?.main ?? Number.NaN)),
    othersUs: median(rs.map((r) => (r.threads?.others ?? []).reduce((a, b) => a + b, 0))),
    minFlt: median(rs.map((r) => r.minFlt)),
    cpuRatio: median(ratios),
    throughputRatio: median(wallRatios),
    cpuRatios: ratios.map((x) => Number(x.toFixed(3))),
  };
}
console.log(JSON.stringify(summary, null, 1));
