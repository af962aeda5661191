import type { Command } from "commander";
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
