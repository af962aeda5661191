/**
 * The rules over job run rows (M4), for both engines: which due time is
 * already claimed, which earlier run blocks a new one, which running rows
 * are abandoned or orphaned, and the notes they get. runs.ts applies them
 * through the engines' statements (RunsSql).
 */
import type { Row } from "./run-rows.js";
import type { NewRun, RunProcess, RunTrigger } from "./runs.js";

/** What begin() found, read in its transaction. */
export interface BeginFound {
  /** Rows of the same job, profile and due time recorded by a scheduler (any outcome), oldest first. */
  claims: Row[];
  /** The job's `running` and `unknown` rows (SQLite: of the caller's boot), newest first. */
  active: Row[];
}

/** What begin() does: nothing (the due time is claimed, or a run may still be alive), or start. */
export type BeginVerdict =
  | { claimedBy: Row }
  | { blocking: Row }
  | { abandon: { id: number; note: string }[] };

/** Triggers of a due time a scheduler handles: one record per (job, profile, due time), on every host. */
const CLAIMING: readonly RunTrigger[] = ["schedule", "catch-up"];

/** Whether a run or record with `trigger` claims its due time. */
export function claims(trigger: RunTrigger): boolean {
  return CLAIMING.includes(trigger);
}

/** The process that proves a run alive: its worker, or its launcher before it has one. */
function processOf(row: Row): RunProcess | undefined {
  if (row.boot_id === null) return undefined;
  if (row.worker_pid !== null && row.worker_start_ticks !== null)
    return { pid: row.worker_pid, startTicks: row.worker_start_ticks, bootId: row.boot_id };
  if (row.launcher_pid !== null && row.launcher_start_ticks !== null)
    return { pid: row.launcher_pid, startTicks: row.launcher_start_ticks, bootId: row.boot_id };
  return undefined;
}

/**
 * Whether the run of `row` may still be alive, seen from `caller`: the
 * server says so (PostgreSQL: its launcher or worker holds its presence),
 * or it ran in the caller's boot and `mayBeAlive` (/proc) does not prove
 * its process dead. A run of another boot that the server does not vouch
 * for is over: /proc of this machine knows nothing of it.
 */
function mayLive(row: Row, caller: RunProcess, mayBeAlive: (p: RunProcess) => boolean): boolean {
  if (row.present === true) return true;
  if (row.boot_id !== caller.bootId) return false;
  const p = processOf(row);
  return p !== undefined && mayBeAlive(p);
}

/**
 * begin()'s decision: a due time already recorded by a scheduler (on any
 * host) is not run again; a run that may still be alive blocks; else the
 * run starts, and every `running` row the server proves ownerless (its
 * launcher and worker gone, on whatever host) is recorded abandoned first.
 */
export function beginVerdict(
  run: NewRun,
  found: BeginFound,
  mayBeAlive: (p: RunProcess) => boolean,
): BeginVerdict {
  const claimed = claims(run.trigger) ? found.claims[0] : undefined;
  if (claimed) return { claimedBy: claimed };
  const blocking = found.active.find((row) => mayLive(row, run.launcher, mayBeAlive));
  if (blocking) return { blocking };
  const abandon = found.active
    .filter((row) => row.outcome === "running" && row.present === false)
    .map((row) => ({ id: row.id, note: abandonedNote(row) }));
  return { abandon };
}

/** markOrphans()'s rule: a running row nobody vouches for whose launcher is dead (or unrecorded). */
export function isOrphan(row: Row, launcherDead: (p: RunProcess) => boolean): boolean {
  if (row.present === true) return false;
  const launcher = launcherOf(row);
  return launcher === undefined || launcherDead(launcher);
}

/** The launcher recorded in a run row, when it was recorded whole. */
function launcherOf(r: Row): RunProcess | undefined {
  return r.launcher_pid !== null && r.launcher_start_ticks !== null && r.boot_id !== null
    ? { pid: r.launcher_pid, startTicks: r.launcher_start_ticks, bootId: r.boot_id }
    : undefined;
}

/** The note of a run whose launcher died. */
export function orphanNote(r: Row): string {
  return `its launcher (pid ${r.launcher_pid ?? "?"}) died while it ran${r.worker_pid ? ` in worker pid ${r.worker_pid}` : " before its worker started"}; not replayed`;
}

/** The note of a running run the server proves ownerless. */
function abandonedNote(r: Row): string {
  return `abandoned: neither its launcher (pid ${r.launcher_pid ?? "?"}) nor its worker${r.worker_pid ? ` (pid ${r.worker_pid})` : ""} on boot ${r.boot_id ?? "?"} is connected to the database any more; not replayed`;
}
