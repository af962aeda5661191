// The results table (console and Markdown), the JSON file and the docs page.

import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { machineMarkdown } from "./machine.mjs";
import { pgCostSection } from "./pg-cost-report.mjs";
import { profilesSection } from "./profiles-report.mjs";
import { targetsOf } from "./rows.mjs";
import { SCALING_CHARTS, SCALING_WHY, writeScalingCharts } from "./scaling-charts.mjs";
import { fmt, fmtRatio } from "./stats.mjs";
import { ratioChart } from "./svg.mjs";
import { turnCpuSection } from "./turn-cpu.mjs";

const root = (p) => fileURLToPath(new URL(`../../${p}`, import.meta.url));

const verdictOf = (t) => (t.pass === null ? "n/a" : t.pass ? "pass" : "FAIL");

function verdict(r) {
  const targets = targetsOf(r);
  if (targets.length === 0) return "";
  if (targets.some((t) => t.pass === false)) return "FAIL";
  return targets.every((t) => t.pass === true) ? "pass" : "n/a";
}

function cells(r) {
  if (r.skipped) return [r.workload, r.skipped, "", "", "", "", "", "", "not run"];
  const abs = (s) => (s ? `${fmt(s.median)} ${r.unit}` : "—");
  const arrow = r.better === "higher" ? "↑" : "↓";
  return [
    r.workload,
    `${r.metric} ${arrow}`,
    abs(r.hearth),
    abs(r.ceiling),
    abs(r.naive),
    fmtRatio(r.vsCeiling),
    fmtRatio(r.vsNaive),
    targetsOf(r)
      .map(
        (t) => `${t.text} (${fmt(t.figure)}${targetsOf(r).length > 1 ? `, ${verdictOf(t)}` : ""})`,
      )
      .join("; "),
    verdict(r),
  ];
}

const HEAD = [
  "workload",
  "metric",
  "hearth",
  "ceiling",
  "naive",
  "hearth/ceiling",
  "hearth/naive",
  "target (figure)",
  "result",
];

/** A plain-text table for the terminal. */
export function consoleTable(rows) {
  const table = [HEAD, ...rows.map(cells)];
  const widths = HEAD.map((_, c) => Math.max(...table.map((r) => String(r[c]).length)));
  const line = (r) => r.map((v, c) => String(v).padEnd(widths[c])).join("  ");
  return [
    line(HEAD),
    widths.map((w) => "-".repeat(w)).join("  "),
    ...table.slice(1).map(line),
  ].join("\n");
}

export function markdownTable(rows) {
  const esc = (v) => String(v).replaceAll("|", "\\|");
  return [
    `| ${HEAD.join(" | ")} |`,
    `| ${HEAD.map(() => "---").join(" | ")} |`,
    ...rows.map((r) => `| ${cells(r).map(esc).join(" | ")} |`),
  ].join("\n");
}

export function writeJson(result) {
  const dir = root("bench/results");
  mkdirSync(dir, { recursive: true });
  const name = `${result.date}${result.mode === "quick" ? "-quick" : ""}.json`;
  const path = `${dir}/${name}`;
  writeFileSync(path, `${JSON.stringify(result, null, 2)}\n`);
  return path;
}

function targetsSummary(rows) {
  const judged = rows.flatMap((r) =>
    targetsOf(r)
      .filter((t) => t.pass !== null)
      .map((t) => ({ r, t })),
  );
  const missed = judged.filter(({ t }) => !t.pass);
  const lines = judged.map(({ r, t }) => {
    const ceiling =
      t.ceilingFigure === undefined
        ? ""
        : `; ${r.baselines?.ceiling ?? "raw better-sqlite3"} (ceiling): ${fmt(t.ceilingFigure)}, ${t.ceilingPass ? "within" : "also outside"} the target`;
    return `- ${t.pass ? "pass" : "**FAIL**"}: ${r.workload}, ${r.metric}: ${t.text}; measured ${fmt(t.figure)} (${t.basis === "worst" ? "worst round" : "median over rounds"})${ceiling}`;
  });
  return { text: lines.join("\n"), passed: judged.length - missed.length, total: judged.length };
}

/** Workload 16's charts (drawn into docs/charts/) and what grows, or "" without its rows. */
function scalingSection(result) {
  if (writeScalingCharts(result, root("docs/charts")).length === 0) return "";
  const images = SCALING_CHARTS.map(([name, alt]) => `![${alt}](charts/${name}.svg)`).join("\n");
  return `## How the costs grow with the store (workload 16)

Log-log, from this run's rows 16 above (medians over the rounds at each size).

${images}

${SCALING_WHY}

`;
}

/**
 * Rows of partial runs (bench/docs.mjs base.json partial.json ...), each
 * with its own command, date and load: workload 18's in their own section,
 * the others here. "" without any.
 */
function partialSection(partials) {
  const parts = partials
    .map((p) => ({ p, rows: p.rows.filter((r) => !r.workload.startsWith("18.")) }))
    .filter(({ rows }) => rows.length > 0);
  if (parts.length === 0) return "";
  const body = parts
    .map(
      ({ p, rows }) => `Medians over ${p.rounds} rounds of \`${p.command}\` on ${p.date}
(raw figures: [bench/results/${p.file}](../bench/results/${p.file})); load average
${p.machine.loadAverage.join(" / ")} before, ${p.loadAfter.join(" / ")} after, on ${p.machine.cpuCount}
CPUs shared with other work.

${markdownTable(rows)}`,
    )
    .join("\n\n");
  return `## Partial runs since the full run

Workloads run on their own after the full run above. The targets of
metrics the full run does not have are counted in the summary at the top;
a metric the full run has too is shown here as measured again (on the
machine as loaded then), and the full run's figure is the one judged.

${body}

`;
}

/** docs/benchmarks.md and docs/benchmarks.svg; `partials`: results of partial runs since (bench/docs.mjs). */
export function writeDocs(result, method, partials = []) {
  const bars = result.rows
    .filter((r) => !r.skipped && (r.vsCeiling || r.vsNaive))
    .map((r) => ({
      label: `${r.workload.split(" ")[0]} ${r.metric}`,
      better: r.better,
      vsCeiling: r.vsCeiling,
      vsNaive: r.vsNaive,
    }));
  const svg = ratioChart(bars, {
    title: `hearth vs baselines, ${result.date} (${result.mode} run)`,
  });
  writeFileSync(root("docs/benchmarks.svg"), svg);
  // A partial run's row for a metric the full run has too is shown, not judged again.
  const key = (r) => `${r.workload.split(" ")[0]} ${r.metric}`;
  const full = new Set(result.rows.map(key));
  const t = targetsSummary([
    ...result.rows,
    ...partials.flatMap((p) => p.rows.filter((r) => !full.has(key(r)))),
  ]);
  const pgCost = partials.find((p) => p.rows.some((r) => r.workload.startsWith("18."))) ?? result;
  const page = `# Benchmarks

Generated by \`${result.command}\` (bench/run.mjs) on ${result.date}, a ${result.mode} run; do not edit by hand.
Raw figures: [bench/results/${result.file}](../bench/results/${result.file})${partials.length > 0 ? `, and of the partial runs since: ${partials.map((p) => `[bench/results/${p.file}](../bench/results/${p.file})`).join(", ")}` : ""}.

**Targets: ${t.passed} of ${t.total} met.**

${t.text}

## Results

Every figure is the median over the rounds (${result.rounds} per workload; ${Math.min(result.rounds, result.sizes.gatewayRounds)} for workloads 3 and 8; ${Math.min(result.rounds, result.sizes.maintenanceRounds)} for workload 7, whose backups take seconds); each ratio is taken
within one round (hearth and its baseline ran back to back, their order
rotated every round) and shown as median (min–max) over the rounds. ↑: higher
is better; ↓: lower is better. Absolute columns are medians. Workload 18's rows
are in their own section below.

${markdownTable(result.rows.filter((r) => !r.workload.startsWith("18.")))}

![hearth/baseline ratios](benchmarks.svg)

${scalingSection(result)}${profilesSection(result)}${partialSection(partials)}${pgCostSection(pgCost, markdownTable)}${turnCpuSection()}## Earlier partial runs

What each change of issues 15 and 18 measured when it was made (before this
full run) is in [benchmarks-history.md](benchmarks-history.md); so are the
counted costs of issue 44 (hearth ps, a gateway of many profiles, the
LangGraph saver, PostgreSQL round trips), measured on a loaded machine
and not yet in a full run.

## Machine

${machineMarkdown(result.machine, result.loadAfter)}

The machine is shared (other work may have run beside the bench): trust
the ratios, which compare runs seconds apart, more than the absolute
figures. This run took ${result.durationSeconds.toFixed(0)} s (after the build).

## Reproduce

\`\`\`sh
npm ci
${result.command}
\`\`\`

\`npm run bench\` builds dist/ first. \`npm run bench -- --quick\` is the
under-a-minute smoke run (small sizes; it writes bench/results/<date>-quick.json
and leaves this page alone unless given \`--docs\`).

## Method

${method}
`;
  writeFileSync(root("docs/benchmarks.md"), page);
}
