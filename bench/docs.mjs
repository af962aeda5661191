// Rewrite docs/benchmarks.md (with docs/benchmarks.svg and the scaling
// charts) from a results file, as the run that wrote it would have:
//
//   node bench/docs.mjs bench/results/<file>.json [bench/results/<partial>.json ...]
//
// Partial runs (`node bench/run.mjs --only ... --no-docs`) named after the
// full run add their rows, each with its own command, date and load: a
// section of their own, and their targets in the summary.
//
// For a change to the page's layout or text after a run (a full run takes
// about 30 minutes); the figures are the file's own.
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { methodMarkdown } from "./lib/method.mjs";
import { writeDocs } from "./lib/report.mjs";

const [file, ...more] = process.argv.slice(2);
if (!file) {
  console.error(
    "usage: node bench/docs.mjs bench/results/<file>.json [bench/results/<partial>.json ...]",
  );
  process.exit(2);
}
// Named as it is stored (a partial run's file is renamed after its workload).
const read = (f) => ({ ...JSON.parse(readFileSync(f, "utf8")), file: basename(f) });
const result = read(file);
writeDocs(
  result,
  // Sizes a partial run has and the full run had not (a workload added since) come from it.
  methodMarkdown({
    ...Object.assign({}, ...more.map((f) => read(f).sizes)),
    ...result.sizes,
    cpuCount: result.machine.cpuCount,
  }),
  more.map(read),
);
console.log(`wrote docs/benchmarks.md from ${[file, ...more].join(", ")}`);
