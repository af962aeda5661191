/**
 * Named failpoints: precise instants at which a crash test kills a hearth
 * process (issue 10; the torture suite reuses them). They are inert unless
 * `$HEARTH_FAILPOINTS` names them when the process starts:
 *
 *   HEARTH_FAILPOINTS="write.after-commit=kill@3"   # SIGKILL at the 3rd hit
 *   HEARTH_FAILPOINTS="backup.mid-publish=kill"      # at the first hit
 *   HEARTH_FAILPOINTS="wal.fsync=fail@2"             # an injected I/O error
 *   HEARTH_FAILPOINTS="checkpoint.thread-start=sleep:400"  # a slow instant
 *   HEARTH_FAILPOINTS="backup.copy-step=stop"        # SIGSTOP: the test changes the world, then SIGCONTs
 *
 * `fail` is taken only by the failpoints in FAILABLE, where the code asks
 * failpointFails() and raises the error that instant would really raise.
 * `sleep:<ms>` blocks the thread that reaches it for that long, then goes on
 * (a slow disk, a loaded machine), at any failpoint. `stop` stops the whole
 * process (SIGSTOP) at that instant, at any failpoint: the test does what it
 * must (fill a disk) and sends SIGCONT, with no timing to guess.
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
  "write.before-fsync":
    "COMMIT returned without a sync of SQLite's own (durability.syncOffLoop); hearth's WAL fsync not yet begun (not acknowledged)",
  "wal.fsync":
    "hearth's fsync of the WAL after a commit (durability.syncOffLoop); `fail` makes it return EIO",
  "checkpoint.thread-start":
    "the checkpoint thread loaded its script and has not yet said it is up; `fail` makes it exit there (a thread that never comes up)",
  "checkpoint.mid-passes":
    "the checkpoint thread ran the first pass of a checkpoint (pages copied without the write lock), the rest not yet run; `fail` makes the thread exit there",
  "checkpoint.in-final":
    "the checkpoint thread's final job runs under the writer's write lock, its merge and checkpoint not yet begun; `fail` makes the thread exit there",
  "backup.copy-step":
    "the backup worker copied one step of pages into the staging file (its progress callback), the next step not yet begun",
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
  "import.after-batch":
    "hearth import committed one batch of a session's messages in the target; the next batch not yet written",
  "import.source-fs":
    "hearth import asked which filesystem holds its source; `fail` makes the answer a network filesystem (nfs)",
  "replicate.mid-put":
    "a replicator wrote a WAL segment or snapshot to a directory target's staging name, not yet renamed into place",
  "replicate.after-put":
    "a WAL segment is on the target (put returned), the replicator has not yet recorded its position; `fail` makes the put's answer lost (the segment stays, the next tick ships from the same frame)",
} as const;

export type FailpointName = keyof typeof FAILPOINTS;

/** The failpoints that take the `fail` action (an injected error instead of a kill). */
const FAILABLE: ReadonlySet<string> = new Set([
  "wal.fsync",
  "checkpoint.thread-start",
  "checkpoint.mid-passes",
  "checkpoint.in-final",
  "import.source-fs",
  "replicate.after-put",
]);

interface Armed {
  action: "kill" | "fail" | "sleep" | "stop";
  /** How long a `sleep` blocks. */
  ms: number;
  /** Fire at this hit (1-based). */
  at: number;
  hits: number;
}

let armed: Map<string, Armed> | null | undefined;

function parse(spec: string | undefined): Map<string, Armed> | null {
  if (spec === undefined || spec.trim() === "") return null;
  const map = new Map<string, Armed>();
  for (const part of spec.split(",")) {
    const match = /^\s*([a-z.-]+)=(kill|fail|stop|sleep:(\d+))(?:@(\d+))?\s*$/.exec(part);
    if (!match || !(match[1]! in FAILPOINTS) || (match[2] === "fail" && !FAILABLE.has(match[1]!))) {
      throw new TypeError(
        `HEARTH_FAILPOINTS: ${JSON.stringify(part)} is not <name>=kill[@N], <name>=stop[@N] or <name>=sleep:<ms>[@N] (or =fail[@N] for ${[...FAILABLE].join(", ")}); names: ${Object.keys(FAILPOINTS).join(", ")}`,
      );
    }
    map.set(match[1]!, {
      action: match[3] === undefined ? (match[2] as "kill" | "fail" | "stop") : "sleep",
      ms: Number(match[3] ?? 0),
      at: Number(match[4] ?? 1),
      hits: 0,
    });
  }
  return map;
}

/** Crash here when a test armed this failpoint; otherwise do nothing. */
export function failpoint(name: FailpointName): void {
  if (fired(name) === "kill") process.kill(process.pid, "SIGKILL");
}

/** True when a test armed this failpoint with `fail` and this is its hit: raise the real error. */
export function failpointFails(name: FailpointName): boolean {
  const action = fired(name);
  if (action === "kill") process.kill(process.pid, "SIGKILL");
  return action === "fail";
}

function fired(name: FailpointName): Armed["action"] | undefined {
  if (armed === null) return undefined;
  if (armed === undefined) {
    armed = parse(process.env.HEARTH_FAILPOINTS);
    if (armed === null) return undefined;
  }
  const point = armed.get(name);
  if (!point || ++point.hits !== point.at) return undefined;
  process.stderr.write(`${JSON.stringify({ event: "failpoint.fired", name, pid: process.pid })}\n`);
  if (point.action === "sleep")
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, point.ms);
  if (point.action === "stop") process.kill(process.pid, "SIGSTOP");
  return point.action;
}
