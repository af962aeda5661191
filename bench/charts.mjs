// Draw workload 16's scaling rows as log-log charts (docs/charts/*.svg).
//
//   node bench/charts.mjs bench/results/<file>.json [--out docs/charts]
//
// Reads the rows whose `scaling.messages` is set (bench/workloads/scaling.mjs)
// and writes one SVG per figure: append rate, tail p50, search p50/p99 and
// file size, each against the number of messages in the store.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { logLogChart } from "./lib/loglog.mjs";

const { values, positionals } = parseArgs({
  options: { out: { type: "string", default: "docs/charts" } },
  allowPositionals: true,
});
if (positionals.length !== 1) {
  console.error("usage: node bench/charts.mjs bench/results/<file>.json [--out docs/charts]");
  process.exit(2);
}
const result = JSON.parse(readFileSync(positionals[0], "utf8"));
const rows = result.rows.filter((r) => r.scaling);
if (rows.length === 0) {
  console.error(`${positionals[0]} holds no scaling rows (workload 16)`);
  process.exit(1);
}

/** [[messages, median]] of one metric (by its name's start) for hearth or the ceiling. */
const curve = (metric, side = "hearth") =>
  rows
    .filter((r) => r.metric.startsWith(metric) && r[side])
    .map((r) => [r.scaling.messages, r[side].median])
    .sort((a, b) => a[0] - b[0]);

const source = `${result.file ?? positionals[0]}, ${result.date}; medians over ${rows[0].rounds} rounds`;
const xLabel = "messages in the store (log)";
const charts = {
  "scaling-append": {
    title: "Append, 1 message per transaction, WAL+FULL",
    yLabel: "messages/s (log)",
    unit: "msg/s",
    series: [
      { name: "hearth", points: curve("append") },
      { name: "raw SQLite", points: curve("append", "ceiling"), dashed: true },
    ],
  },
  "scaling-tail": {
    title: "Tail of 200 (a random session), p50",
    yLabel: "ms (log)",
    unit: "ms",
    series: [
      { name: "hearth", points: curve("tail") },
      { name: "raw SQLite", points: curve("tail", "ceiling"), dashed: true },
    ],
  },
  "scaling-search": {
    title: "Search (FTS5, 1/3 common words, 2/3 rare)",
    yLabel: "ms (log)",
    unit: "ms",
    series: [
      { name: "hearth p50", points: curve("search p50") },
      { name: "hearth p99", points: curve("search p99") },
      { name: "raw p50", points: curve("search p50", "ceiling"), dashed: true },
      { name: "raw p99", points: curve("search p99", "ceiling"), dashed: true },
    ],
  },
  "scaling-size": {
    title: "File size",
    yLabel: "MiB (log)",
    unit: "MiB",
    series: [
      { name: "database", points: curve("file size, database") },
      { name: "WAL (largest)", points: curve("file size, WAL") },
    ],
  },
};

mkdirSync(values.out, { recursive: true });
for (const [name, chart] of Object.entries(charts)) {
  const path = join(values.out, `${name}.svg`);
  writeFileSync(path, logLogChart({ ...chart, subtitle: source, xLabel }));
  console.log(`wrote ${path}`);
}
