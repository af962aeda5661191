// Rewrite docs/benchmarks.md (with docs/benchmarks.svg and the scaling
// charts) from a results file, as the run that wrote it would have:
//
//   node bench/docs.mjs bench/results/<file>.json
//
// For a change to the page's layout or text after a run (a full run takes
// about 30 minutes); the figures are the file's own.
import { readFileSync } from "node:fs";
import { methodMarkdown } from "./lib/method.mjs";
import { writeDocs } from "./lib/report.mjs";

const [file] = process.argv.slice(2);
if (!file) {
  console.error("usage: node bench/docs.mjs bench/results/<file>.json");
  process.exit(2);
}
const result = JSON.parse(readFileSync(file, "utf8"));
writeDocs(result, methodMarkdown({ ...result.sizes, cpuCount: result.machine.cpuCount }));
console.log(`wrote docs/benchmarks.md from ${file}`);
