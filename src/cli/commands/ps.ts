import type { Command } from "commander";
import type { PgPsReport } from "../../ops/pg/ps.js";
import type { PsProfile } from "../../ops/ps.js";
import { globals } from "../globals.js";
import { printJson } from "../output.js";
import { printable } from "../printable.js";

export function registerPs(program: Command): void {
  program
    .command("ps")
    .description("list every process holding each profile's store (from the kernel's lock table)")
    .action(async (_options: unknown, command: Command) => {
      const g = globals(command);
      const pg = await (await import("../../ops/backend.js")).maintenanceTarget(g);
      if (pg.backend === "postgres") {
        const { runPgPs } = await import("../../ops/pg/ps.js");
        const report = await runPgPs({
          home: pg.home,
          profile: pg.profile,
          url: pg.url,
          settings: pg.settings,
        });
        if (g.json) return printJson(report);
        process.stdout.write(renderPg(report));
        return;
      }
      const { runPs } = await import("../../ops/ps.js");
      const report = runPs({ home: g.home, profile: g.profile });
      if (g.json) return printJson(report);
      if (report.profiles.length === 0) {
        process.stdout.write(`no stores under ${report.home}\n`);
        return;
      }
      for (const p of report.profiles) process.stdout.write(render(p));
    });
}

function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((_, i) =>
    Math.max(header[i]!.length, ...rows.map((r) => r[i]!.length)),
  );
  return [header, ...rows].map(
    (row) =>
      `  ${row.map((cell, i) => (i < row.length - 1 ? cell.padEnd(widths[i]!) : cell)).join("  ")}`,
  );
}

function renderPg(r: PgPsReport): string {
  const lines = [
    `profile ${r.profile}  ${r.url}  (PostgreSQL ${r.server.version}, ${r.server.role})`,
  ];
  if (r.hosts.length > 0)
    lines.push(
      ...table(
        ["KIND", "HOST", "ADDRESS", "PID", "SINCE"],
        r.hosts.map((h) => [
          h.kind,
          printable(h.host, { oneLine: true }),
          printable(h.address, { oneLine: true }),
          String(h.pid),
          new Date(h.startedAt).toISOString(),
        ]),
      ),
    );
  if (r.connections.length === 0) lines.push("  no hearth process is connected");
  else
    lines.push(
      ...table(
        ["BACKEND", "KIND", "PID", "HOST", "STATE", "SINCE"],
        r.connections.map((c) => [
          String(c.backendPid),
          printable(c.kind, { oneLine: true }),
          c.pid === null ? "?" : String(c.pid),
          printable(c.host ?? "?", { oneLine: true }),
          c.state ?? "?",
          c.since ?? "?",
        ]),
      ),
    );
  for (const l of r.locks.advisory)
    lines.push(
      `  advisory lock ${l.key.join(":")}${l.label ? ` (${l.label})` : ""} ${l.granted ? "held" : "awaited"} by backend ${l.backendPid} ${printable(l.applicationName, { oneLine: true })}`,
    );
  for (const w of r.locks.waiting)
    lines.push(
      `  backend ${w.backendPid} ${printable(w.applicationName, { oneLine: true })} waits for a ${w.lockType} lock${w.relation ? ` on ${w.relation}` : ""}, blocked by ${w.blockedBy.join(", ") || "?"}`,
    );
  return `${lines.join("\n")}\n`;
}

function render(p: PsProfile): string {
  const lines = [`profile ${p.profile}  ${p.path}${p.exists ? "" : "  (no database)"}`];
  if (p.holders.length === 0) lines.push("  no process holds it");
  else {
    const rows = p.holders.map((h) => [
      String(h.pid),
      h.kind,
      h.roles.length > 0 ? h.roles.join(",") : "-",
      h.since ?? "unknown",
      // Another process's argv may hold terminal escapes: shown, never obeyed.
      h.commandLine === undefined || h.commandLine === null
        ? "(command line unreadable)"
        : printable(h.commandLine, { oneLine: true }),
    ]);
    const header = ["PID", "KIND", "ROLE", "SINCE", "COMMAND"];
    const widths = header.map((_, i) =>
      Math.max(header[i]!.length, ...rows.map((r) => r[i]!.length)),
    );
    for (const row of [header, ...rows]) {
      lines.push(
        `  ${row.map((cell, i) => (i < row.length - 1 ? cell.padEnd(widths[i]!) : cell)).join("  ")}`,
      );
    }
  }
  for (const g of p.ghosts) {
    lines.push(
      `  pid ${g.pid} still holds a deleted generation: ${g.files.join(", ")}  (${g.commandLine ? printable(g.commandLine, { oneLine: true }) : "?"})`,
    );
  }
  if (p.unexplainedLocks > 0) {
    lines.push(
      `  ${p.unexplainedLocks} lock(s) belong to a process hearth cannot name (run as root to see it)`,
    );
  }
  if (p.uninspected.length > 0) {
    lines.push(
      `  could not look for deleted generations in pids ${p.uninspected.join(", ")} (not readable by this user)`,
    );
  }
  for (const m of p.staleMarkers) lines.push(`  stale marker (process gone): ${m.path}`);
  return `${lines.join("\n")}\n`;
}
