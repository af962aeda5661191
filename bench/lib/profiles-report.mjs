// Workload 16b's curve (bench/workloads/profiles.mjs) as one table: per
// profile count, the medians of its rows, with the load it ran beside.

const COLUMNS = [
  ["wall time to ready", "ready (s)", 2],
  ["CPU time to ready", "CPU to ready (s)", 2],
  ["RSS after ready", "RSS (MB)", 0],
  ["descriptors", "descriptors", 0],
  ["descriptors per served profile (over one profile's)", "descriptors / profile", 1],
  ["RSS per served profile (over one profile's)", "RSS / profile (MB)", 2],
  ["threads", "threads", 0],
  ["hearth ps while the gateway serves every profile: wall time", "hearth ps, served (s)", 2],
  ["hearth ps with nothing running: wall time", "hearth ps, idle (s)", 2],
  ["load average (1 min) at start", "load (1 min)", 1],
];

/** The curve's markdown table from `rows` (rows carrying `profiles: true`); "" without any. */
export function profilesTable(rows) {
  const mine = rows.filter((r) => r.profiles && !r.skipped);
  if (mine.length === 0) return "";
  const counts = [...new Set(mine.map((r) => Number(/\((\d+) profiles\)/.exec(r.workload)?.[1])))];
  counts.sort((a, b) => a - b);
  const cell = (count, metric, digits) => {
    const r = mine.find((x) => x.metric === metric && x.workload.includes(`(${count} profiles)`));
    return r ? r.hearth.median.toFixed(digits) : "—";
  };
  const head = `| profiles | ${COLUMNS.map(([, h]) => h).join(" | ")} |`;
  const rule = `|${"---|".repeat(COLUMNS.length + 1)}`;
  const body = counts.map(
    (n) => `| ${n} | ${COLUMNS.map(([m, , d]) => cell(n, m, d)).join(" | ")} |`,
  );
  return [head, rule, ...body].join("\n");
}

/** The section of docs/benchmarks.md, or "" without workload 16b's rows. */
export function profilesSection(result) {
  const table = profilesTable(result.rows);
  if (!table) return "";
  return `## Many profiles in one gateway (workload 16b)

Medians over the rounds at each count, from this run's rows 16b above; the
load average is the machine's at each gateway's start (ready time moves
with it; descriptors and threads are counted and do not).

${table}

`;
}
