import type { Command } from "commander";
import type { AuditEntry } from "../../store/audit.js";
import { globals } from "../globals.js";
import { printJson } from "../output.js";
import { printable } from "../printable.js";

// Loaded when the command runs, never by `hearth --help` or another command.
const openStore: typeof import("../../store/open.js").openStore = async (...a) =>
  (await import("../../store/open.js")).openStore(...a);

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `--since`: a duration back from now (30m, 12h, 7d) or an ISO 8601 time; ms since the epoch. */
export function parseSince(value: string, now = Date.now()): number {
  const ago = /^(\d{1,6})([mhd])$/.exec(value);
  if (ago) return now - Number(ago[1]) * UNIT_MS[ago[2] as keyof typeof UNIT_MS];
  const at = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(at)) {
    throw new TypeError(
      `--since must be a duration (30m, 12h, 7d) or an ISO 8601 time, got ${JSON.stringify(value)}`,
    );
  }
  return at;
}

function parseLimit(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1000)
    throw new TypeError(`--limit must be 1..1000, got ${JSON.stringify(value)}`);
  return n;
}

/** One act as a terminal line: time, outcome, action, who (via, from where), targets. */
function line(e: AuditEntry): string {
  const who = `${e.actor.kind}:${e.actor.id} via ${e.actor.via}${e.actor.address ? ` from ${e.actor.address}` : ""}`;
  const targets =
    e.targets.length > 3 ? `${e.targets.slice(0, 3).join(",")},…` : e.targets.join(",");
  const text = `${new Date(e.at).toISOString()}  ${e.outcome === "ok" ? "ok    " : "FAILED"}  ${e.action}  ${who}  ${targets}${e.detail ? `  ${JSON.stringify(e.detail)}` : ""}`;
  return `${printable(text, { oneLine: true })}\n`;
}

/** `hearth audit`: the audit trail of destructive and exporting acts, newest first. */
export function registerAudit(program: Command): void {
  program
    .command("audit")
    .description("who deleted, archived, pruned, restored, repaired or exported what, newest first")
    .option(
      "--since <when>",
      "acts at or after this: a duration back (30m, 12h, 7d) or an ISO time",
    )
    .option("--limit <n>", "at most this many (1..1000)", parseLimit, 100)
    .action(async (o: { since?: string; limit: number }, command: Command) => {
      const g = globals(command);
      const since = o.since === undefined ? 0 : parseSince(o.since);
      const store = await openStore({ home: g.home, profile: g.profile, role: "reader" });
      try {
        const entries = await store.audit.list({ since, limit: o.limit });
        if (g.json)
          return printJson({
            profile: store.profile,
            entries: entries.map((e) => ({ ...e, at: new Date(e.at).toISOString() })),
          });
        if (entries.length === 0) process.stdout.write("no audited acts\n");
        for (const e of entries) process.stdout.write(line(e));
      } finally {
        await store.close();
      }
    });
}
