// Workload 16's scaling rows as log-log SVG charts (docs/charts/*.svg): append
// rate, tail p50, search p50/p99 and file sizes, each against the number of
// messages in the store. Used by `npm run bench` (with the docs) and by
// bench/charts.mjs for a results file.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { logLogChart } from "./loglog.mjs";

/** The charts' names (docs/charts/<name>.svg) with their alt texts, in page order. */
export const SCALING_CHARTS = [
  ["scaling-append", "append rate against store size"],
  ["scaling-tail", "tail of 200 against store size"],
  ["scaling-search", "search p50 and p99 against store size"],
  ["scaling-size", "file sizes against store size"],
];

/** Write one SVG per chart into `outDir`; returns the paths, [] when `result` holds no scaling rows. */
export function writeScalingCharts(result, outDir, sourceName = result.file) {
  const rows = result.rows.filter((r) => r.scaling);
  if (rows.length === 0) return [];
  /** [[messages, median]] of one metric (by its name's start) for hearth or the ceiling. */
  const curve = (metric, side = "hearth") =>
    rows
      .filter((r) => r.metric.startsWith(metric) && r[side])
      .map((r) => [r.scaling.messages, r[side].median])
      .sort((a, b) => a[0] - b[0]);

  /** hearth's curve of `metric` beside raw SQLite's. */
  const vsRaw = (metric) => [
    { name: "hearth", points: curve(metric) },
    { name: "raw SQLite", points: curve(metric, "ceiling"), dashed: true },
  ];
  const source = `${sourceName}, ${result.date}; medians over ${rows[0].rounds} rounds`;
  const xLabel = "messages in the store (log)";
  const charts = {
    "scaling-append": {
      title: "Append, 1 message per transaction, WAL+FULL",
      yLabel: "messages/s (log)",
      unit: "msg/s",
      series: vsRaw("append"),
    },
    "scaling-tail": {
      title: "Tail of 200 (a random session), p50",
      yLabel: "ms (log)",
      unit: "ms",
      series: vsRaw("tail"),
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
  mkdirSync(outDir, { recursive: true });
  return Object.entries(charts).map(([name, chart]) => {
    const path = join(outDir, `${name}.svg`);
    writeFileSync(path, logLogChart({ ...chart, subtitle: source, xLabel }));
    return path;
  });
}

/**
 * What grows with the store, and why: the mechanisms behind workload 16's
 * curves, which hold whatever the machine (the figures are in the table
 * and the charts above this text on the generated page).
 */
export const SCALING_WHY = `What grows, and why:

- **File size grows linearly** with the messages: each one holds its text,
  its row's other columns, an entry in the \`(session_id, active, ordinal)\`
  index and its words in the FTS5 index.
- **The WAL does not grow with the store**: \`wal_autocheckpoint\` (1,000
  pages, 4 MiB) and \`journal_size_limit\` (64 MiB) bound it.
- **A tail of 200 stays nearly flat**: it is a keyset read of one range of
  the \`(session_id, active, ordinal)\` index, whose B-tree gains a level
  (one more page read) per ~100× more rows, then 200 rows. Pages that are
  not in the OS page cache come from the disk, which costs raw SQLite as
  much as hearth. The raw baseline reads \`SELECT *\` into
  objects; hearth reads the columns it needs as arrays.
- **Search grows with a word's matches**, so linearly with the store for a
  given word: its FTS5 posting list holds every message containing it, and
  bm25 ranking reads each match's positions and document length. hearth
  ranks only a word's newest 5,000 matches (\`RANK_WINDOW\`,
  src/store/search.ts), which keeps common words' p99 far below raw SQLite
  ranking every match; finding where those newest matches start still walks
  the posting list, so hearth's p99 grows too, more slowly. The p50 (rare
  words) grows as their match counts do. Searches scoped to a session or an
  owner read only that scope's matches.
- **Appends at WAL+FULL slow down as the store grows**, for raw SQLite as
  for hearth: the commit's fsync costs the same at every size, but each
  append dirties pages in several B-trees (the messages table's last page,
  a leaf of the per-session index for a random session, the session row,
  the FTS5 segments), which in a large store are scattered over a large
  file, so each checkpoint writes more pages to more places; the trees'
  extra levels add little beside that.

The analysis with the figures of its first run is in
[benchmarks-history.md](benchmarks-history.md#workload-16-how-the-costs-grow-with-the-store-partial-run-2026-12-01).`;
