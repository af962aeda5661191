// Draw workload 16's scaling rows as log-log charts (docs/charts/*.svg).
//
//   node bench/charts.mjs bench/results/<file>.json [--out docs/charts]
//
// A full `npm run bench` draws them itself; this redraws them from a results
// file (bench/lib/scaling-charts.mjs).
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { writeScalingCharts } from "./lib/scaling-charts.mjs";

const { values, positionals } = parseArgs({
  options: { out: { type: "string", default: "docs/charts" } },
  allowPositionals: true,
});
if (positionals.length !== 1) {
  console.error("usage: node bench/charts.mjs bench/results/<file>.json [--out docs/charts]");
  process.exit(2);
}
const result = JSON.parse(readFileSync(positionals[0], "utf8"));
const paths = writeScalingCharts(result, values.out, result.file ?? positionals[0]);
if (paths.length === 0) {
  console.error(`${positionals[0]} holds no scaling rows (workload 16)`);
  process.exit(1);
}
for (const path of paths) console.log(`wrote ${path}`);
