/**
 * Named failpoints: precise instants at which a crash test kills a hearth
 * process (issue 10; the torture suite reuses them). They are inert unless
 * `$HEARTH_FAILPOINTS` names them when the process starts:
 *
 *   HEARTH_FAILPOINTS="write.after-commit=kill@3"   # SIGKILL at the 3rd hit
 *   HEARTH_FAILPOINTS="backup.mid-publish=kill"      # at the first hit
 *
 * An unknown name or action is an error at the first failpoint reached, so
 * a misspelled failpoint can never make a crash test pass by not firing.
 * Disarmed, a failpoint costs one comparison.
 */
export const FAILPOINTS = {
  "write.before-commit":
    "a write transaction's statements ran (pages may already be in the WAL), COMMIT not yet issued",
  "write.after-commit":
    "COMMIT returned and the generation guard passed; the caller's promise is not yet resolved (not acknowledged)",
  "backup.mid-publish":
    "the backup copy is written, fsync'd and verified under its staging name, not yet renamed into the backup pattern",
  "repair.mid-promote":
    "repair removed the damaged store's sidecars (kept in the forensic copy) and has not yet renamed the repaired file over it",
  "migrate.mid-migration":
    "inside the migration transaction, after the first migration's statements, before COMMIT",
  "migrate-to.mid-copy":
    "hearth migrate --to committed a chunk of rows (and its progress mark) in the target; the next chunk not yet read",
  "turn.before-tool-result":
    "a tool of an agent turn ran (its start is recorded), its result not yet committed",
  "turn.after-tool-result": "a tool's result is committed, the next model request not yet sent",
} as const;

export type FailpointName = keyof typeof FAILPOINTS;

interface Armed {
  action: "kill";
  /** Fire at this hit (1-based). */
  at: number;
  hits: number;
}

let armed: Map<string, Armed> | null | undefined;

function parse(spec: string | undefined): Map<string, Armed> | null {
  if (spec === undefined || spec.trim() === "") return null;
  const map = new Map<string, Armed>();
  for (const part of spec.split(",")) {
    const match = /^\s*([a-z.-]+)=kill(?:@(\d+))?\s*$/.exec(part);
    if (!match || !(match[1]! in FAILPOINTS)) {
      throw new TypeError(
        `HEARTH_FAILPOINTS: ${JSON.stringify(part)} is not <name>=kill[@N]; names: ${Object.keys(FAILPOINTS).join(", ")}`,
      );
    }
    map.set(match[1]!, { action: "kill", at: Number(match[2] ?? 1), hits: 0 });
  }
  return map;
}

/** Crash here when a test armed this failpoint; otherwise do nothing. */
export function failpoint(name: FailpointName): void {
  if (armed === null) return;
  if (armed === undefined) {
    armed = parse(process.env.HEARTH_FAILPOINTS);
    if (armed === null) return;
  }
  const point = armed.get(name);
  if (!point || ++point.hits !== point.at) return;
  process.stderr.write(`${JSON.stringify({ event: "failpoint.fired", name, pid: process.pid })}\n`);
  process.kill(process.pid, "SIGKILL");
}
