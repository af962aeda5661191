/**
 * The checkpoint thread: runs checkpoints of a database's WAL into the
 * database file, off the event loop of the process that writes it.
 *
 * A checkpoint copies WAL pages to scattered places in the database file and
 * fsyncs it: 40–120 ms on a 1 GB store, which SQLite's automatic checkpoint
 * spends inside a commit, on the writer's event loop. Here a checkpoint is
 * two jobs (src/store/sqlite/wal-sync/checkpointer.ts): passes while the writer
 * goes on, then a final one under the write lock. The passes open a
 * connection of their own and check that it landed on the inode the writer
 * holds (F3: never checkpoint a file the writer does not use); the final job
 * checks that again, runs on that connection and closes it, so the thread
 * keeps no descriptor on the store between checkpoints. Before its
 * checkpoint, the final job may merge a chunk of the search index
 * (src/store/sqlite/fts-merge.ts), the one write the thread makes: derived pages
 * only, never a row of the store's own tables.
 */
import { readlinkSync, statSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import { failpointFails } from "../../../failpoints.js";
import { inodeKey } from "../../../files/inspect.js";
import { mergeSearchIndex } from "../fts-merge.js";
import type { CheckpointJob, CheckpointReply } from "./checkpointer.js";
import { checkpointModeFor, type WalCheckpointRow, walCheckpoint } from "./wal-checkpoint.js";

type Passes = Extract<CheckpointJob, { kind: "passes" }>;
type Final = Extract<CheckpointJob, { kind: "final" }>;

/** This thread's connections never wait for a lock, except the final job's wait for readers. */
const NO_WAIT = "busy_timeout = 0";

/** Connections the passes kept for their final job, by the passes' job id. */
const kept = new Map<number, Database.Database>();

/** A connection to the writer's file (F3), or why not; SQLite's automatic checkpoint off. */
function connect(job: Passes | Final): Database.Database | string {
  const db = new Database(job.path, { fileMustExist: true });
  if (!sameFile(job)) {
    db.close();
    return moved(job);
  }
  db.pragma(NO_WAIT);
  // The merge's own commit must not checkpoint: the job's checkpoint does, in the mode it chose.
  db.pragma("wal_autocheckpoint = 0");
  db.pragma(`synchronous = ${job.synchronous}`);
  return db;
}

const moved = (job: Passes | Final) =>
  `${job.path} (or its -wal or -shm) is no longer the file the writer holds`;

/** The database, and the -wal and -shm when the job names them, are still the writer's (F3). */
function sameFile(job: Passes | Final): boolean {
  return (
    sameKey(job.path, job.key) &&
    (job.walLink
      ? sameLink(job.walLink)
      : job.walKey === undefined || sameKey(`${job.path}-wal`, job.walKey)) &&
    (job.shmKey === undefined || sameKey(`${job.path}-shm`, job.shmKey))
  );
}

/**
 * The writer's -wal descriptor still reads the name it was opened by: the
 * path names the writer's -wal (FileGuard.walLink). Not a stat: one of the
 * -wal makes the writer's next commit fsync its inode too (issue 44).
 */
function sameLink(wal: { link: string; name: string }): boolean {
  try {
    return readlinkSync(wal.link) === wal.name;
  } catch {
    return false; // the descriptor is gone: not proven the same file
  }
}

function sameKey(path: string, key: string): boolean {
  const stats = statSync(path, { throwIfNoEntry: false });
  return stats !== undefined && inodeKey(stats) === key;
}

function passes(job: Passes): CheckpointReply {
  let db: Database.Database | string | undefined;
  try {
    db = connect(job);
    if (typeof db === "string") return { id: job.id, ok: false, message: db };
    let row: WalCheckpointRow | undefined;
    let before = 0;
    let first: number | undefined;
    for (let pass = 1; pass <= job.maxPasses; pass++) {
      if (pass > 1 && !sameFile(job)) break;
      row = walCheckpoint(db, "PASSIVE");
      const copied = row.checkpointed - before;
      before = row.checkpointed;
      first ??= row.log;
      if (pass === 1 && failpointFails("checkpoint.mid-passes")) process.exit(70);
      // Over when little was or is left to copy (what the writer committed
      // during this pass: the final job copies it; another pass would only
      // sync the WAL once more for it), when it stopped short, or when the
      // writer outpaces the passes (the WAL grew by `growth` frames meanwhile).
      const left = row.log - row.checkpointed;
      if (row.busy !== 0 || row.log < 0 || copied <= job.finalFrames || left <= job.finalFrames)
        break;
      if (row.log - first >= job.growth) break;
    }
    kept.set(job.id, db);
    return { id: job.id, ok: true, ...row! };
  } catch (err) {
    if (typeof db === "object") db.close();
    return { id: job.id, ok: false, message: (err as Error).message };
  } finally {
    Atomics.store(job.done, 0, 1);
  }
}

function final(job: Final): CheckpointReply {
  let db: Database.Database | string | undefined = kept.get(job.passesId);
  kept.delete(job.passesId);
  try {
    if (db && !sameFile(job)) return { id: job.id, ok: false, message: moved(job) };
    db ??= connect(job);
    if (typeof db === "string") return { id: job.id, ok: false, message: db };
    if (failpointFails("checkpoint.in-final")) process.exit(70);
    const merged = mergeFirst(db, job.merge, job.synchronous);
    const { row, waited } = lastCheckpoint(db, job);
    return {
      id: job.id,
      ok: true,
      ...row,
      ...(merged === undefined ? {} : { merged }),
      ...(waited ? { waited } : {}),
    };
  } catch (err) {
    return { id: job.id, ok: false, message: (err as Error).message };
  } finally {
    if (typeof db === "object") db.close();
  }
}

/**
 * The final checkpoint: PASSIVE, or TRUNCATE past truncateAbove, as SQLite's
 * automatic checkpoint would. When readers from before the copy keep a WAL
 * `restartFrames` long from starting over (TRUNCATE stopped by one, or the
 * WAL copied whole), once more waiting up to `readerWaitMs`
 * for them: this thread waits, the writers wait for the write lock off
 * their loops, and new readers read the database file (every frame is in
 * it), so only the reads already running are waited for.
 */
function lastCheckpoint(
  db: Database.Database,
  job: Final,
): { row: WalCheckpointRow; waited: boolean } {
  const mode = checkpointModeFor(job.path, job.truncateAbove);
  const row = walCheckpoint(db, mode);
  // Held: copied whole (PASSIVE) or stopped by a reader (TRUNCATE), and still long.
  const held =
    (mode === "TRUNCATE" ? row.busy !== 0 : row.busy === 0) && row.log >= job.restartFrames;
  if (!held || job.readerWaitMs <= 0) return { row, waited: false };
  db.pragma(`busy_timeout = ${job.readerWaitMs}`);
  try {
    return { row: walCheckpoint(db, mode === "TRUNCATE" ? "TRUNCATE" : "RESTART"), waited: true };
  } finally {
    db.pragma(NO_WAIT);
  }
}

function drop(job: Extract<CheckpointJob, { kind: "drop" }>): CheckpointReply {
  kept.get(job.passesId)?.close();
  kept.delete(job.passesId);
  return { id: job.id, ok: false, message: "dropped" };
}

/**
 * The merge asked for, if any: whether it merged, or why it failed (the
 * checkpoint still runs). Its commit does not fsync the WAL (synchronous
 * NORMAL for it, at FULL or EXTRA): the checkpoint that follows at once
 * fsyncs the WAL before it copies a frame, and under the write lock nothing
 * commits in between. A crash before that loses at most the merge, derived
 * pages whose loss leaves the index as it was (issue 44: one WAL fsync less
 * per checkpoint).
 */
function mergeFirst(
  db: Database.Database,
  pages: number,
  synchronous: string,
): boolean | string | undefined {
  if (pages <= 0) return undefined;
  const lower = /^(full|extra|2|3)$/i.test(synchronous);
  try {
    if (lower) db.pragma("synchronous = NORMAL");
    return mergeSearchIndex((sql) => db.prepare<unknown[]>(sql), pages);
  } catch (err) {
    return (err as Error).message;
  } finally {
    if (lower) db.pragma(`synchronous = ${synchronous}`);
  }
}

parentPort!.on("message", (job: CheckpointJob) => {
  const reply = job.kind === "passes" ? passes(job) : job.kind === "final" ? final(job) : drop(job);
  parentPort!.postMessage(reply);
});
// Started and loaded (better-sqlite3 included): the writer takes its write
// lock for a checkpoint only after this, so no writer waits for a start-up.
if (failpointFails("checkpoint.thread-start")) process.exit(70);
Atomics.store((workerData as { up: Int32Array }).up, 0, 1);
parentPort!.postMessage({ ready: true });
