// docs/benchmarks.md's section for workload 18: its rows and the N-host
// throughput they project. A projection, not a measurement: this 2-CPU
// machine cannot run N gateway hosts and a database server side by side.
import { fmt } from "./stats.mjs";

const HOSTS = [1, 2, 4, 8, 16];

/** The median of `metric` in workload 18's rows: { hearth, ceiling, naive }. */
function medians(rows, metric) {
  const r = rows.find((x) => x.workload.startsWith("18.") && x.metric.startsWith(metric));
  return r && { hearth: r.hearth?.median, ceiling: r.ceiling?.median, naive: r.naive?.median };
}

/**
 * msg/s for `hosts` gateway hosts of `hostCores` cores each on one database
 * server of `dbCores`: the lesser of what the gateways' CPU and the
 * server's CPU allow (ms of CPU per message each).
 */
export const project = ({ hosts, hostCores, dbCores, gatewayMs, serverMs }) =>
  Math.min((hosts * hostCores * 1000) / gatewayMs, (dbCores * 1000) / serverMs);

/** The gateway's statements per message by text (the statements row's byStatement), as a table. */
function breakdown(rows) {
  const list = rows.find((r) => r.byStatement)?.byStatement;
  if (!list) return "";
  const cell = (q) => `\`${q.length > 110 ? `${q.slice(0, 110)}…` : q}\``.replaceAll("|", "\\|");
  const lines = list
    .filter(([, calls]) => calls >= 0.0005)
    .map(([q, calls, ms]) => `| ${fmt(calls)} | ${fmt(ms)} | ${cell(q)} |`);
  return `The gateway's statements per message, by text (pg_stat_statements; the mean
over the rounds; execution time excludes parsing, planning and the protocol):

| calls | execution ms | statement |
| --- | --- | --- |
${lines.join("\n")}

`;
}

/** The section (Markdown), or "" when the run has no workload 18 rows; `table` renders rows. */
export function pgCostSection(result, table) {
  const rows = result.rows.filter((r) => r.workload.startsWith("18."));
  if (rows.length === 0) return "";
  const gw = medians(rows, "gateway CPU");
  const server = medians(rows, "PostgreSQL server CPU");
  const cores = result.machine.cpuCount;
  const line = (label, gatewayMs, serverMs) =>
    `| ${label} | ${HOSTS.map((hosts) => fmt(project({ hosts, hostCores: cores, dbCores: cores, gatewayMs, serverMs }))).join(" | ")} |`;
  const knee = (gatewayMs, serverMs) => fmt(cores / serverMs / (cores / gatewayMs));
  return `## Many hosts, one store: what a message costs on PostgreSQL (workload 18)

The figures that predict how throughput grows with gateway hosts on one
PostgreSQL database, per acknowledged message (method: workload 18 below).
Medians over ${rows[0].rounds} rounds of \`${result.command}\` on ${result.date}
(raw figures: [bench/results/${result.file}](../bench/results/${result.file})); load
average ${result.machine.loadAverage.join(" / ")} before, ${result.loadAfter.join(" / ")} after, on ${cores}
CPUs shared with other work: CPU time per message is less disturbed by that
than throughput, which is given only for reference.

${table(rows)}

${breakdown(rows)}**Projection, not a measurement.** N gateway hosts of ${cores} cores each
(this machine's) on one database server of ${cores} cores, each side busy
on its own CPU only: throughput = min(N × ${cores} × 1000 / gateway CPU per
message, ${cores} × 1000 / server CPU per message) msg/s. It leaves out
network round trips (a commit waits for each of its round trips in turn),
lock waits between hosts, disk and the server's background work
(checkpoints, autovacuum), so it is an upper bound.

| msg/s with N hosts | ${HOSTS.map((h) => `N = ${h}`).join(" | ")} |
| --- | ${HOSTS.map(() => "---").join(" | ")} |
${line(`hearth (gateway ${fmt(gw.hearth)} ms, server ${fmt(server.hearth)} ms per message)`, gw.hearth, server.hearth)}
${line(`raw-pg server cost (gateway as hearth's, server ${fmt(server.ceiling)} ms)`, gw.hearth, server.ceiling)}

The database server's CPU is the bound from about ${knee(gw.hearth, server.hearth)} hosts on
(gateway CPU / server CPU per message, at equal cores); at the raw
ceiling's server cost it would be from about ${knee(gw.hearth, server.ceiling)} hosts. More
server cores move that point in proportion.

`;
}
