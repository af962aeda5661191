import type { ChildReadiness } from "../../http/ready-probe.js";
import type { ChildState } from "../../supervisor/supervise.js";
import { printable } from "../printable.js";

/** What the control socket answers to `status` (docs/cli.md, `hearth status --json`). */
export interface StatusAnswer {
  ok: true;
  pid: number;
  home: string;
  startedAt: string;
  children: (ChildState & { rssBytes: number | null; ready: ChildReadiness | null })[];
}

function duration(ms: number | null): string {
  if (ms === null) return "-";
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86_400)}d${Math.floor((s % 86_400) / 3600)}h`;
}

function mib(bytes: number | null): string {
  return bytes === null ? "-" : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** `hearth status` for a person: one row per child, then why any is not ready. */
export function renderStatus(a: StatusAnswer): string {
  const header = ["NAME", "STATE", "PID", "UPTIME", "RESTARTS", "MEMORY", "READY", "ADDRESS"];
  const rows = a.children.map((c) => [
    c.name,
    c.state,
    c.pid === null ? "-" : String(c.pid),
    duration(c.uptimeMs),
    String(c.restarts),
    mib(c.rssBytes),
    c.ready?.status ?? "-",
    printable(c.address ?? "-", { oneLine: true }),
  ]);
  const widths = header.map((_, i) =>
    Math.max(header[i]!.length, ...rows.map((r) => r[i]!.length)),
  );
  const lines = [
    `hearth start pid ${a.pid} on ${printable(a.home, { oneLine: true })} since ${a.startedAt}`,
  ];
  for (const row of [header, ...rows])
    lines.push(
      `  ${row.map((cell, i) => (i < row.length - 1 ? cell.padEnd(widths[i]!) : cell)).join("  ")}`,
    );
  for (const c of a.children)
    for (const r of c.ready?.reasons ?? [])
      lines.push(
        `  ${c.name}: ${r.code}${r.profile ? ` (${r.profile})` : ""}: ${printable(r.message, { oneLine: true })}`,
      );
  return `${lines.join("\n")}\n`;
}
