/**
 * The checkpoint thread: runs PASSIVE checkpoints of a database's WAL into
 * the database file, off the event loop of the process that writes it.
 *
 * A checkpoint copies WAL pages to scattered places in the database file and
 * fsyncs it: 40–120 ms on a 1 GB store, which SQLite's automatic checkpoint
 * spends inside a commit, on the writer's event loop. Here each job opens a
 * connection of its own, checks that it landed on the inode the writer
 * holds (F3: never checkpoint a file the writer does not use), runs the
 * checkpoint and closes again, so the thread keeps no descriptor on the
 * store between jobs. Before the checkpoint, a job may merge a chunk of the
 * search index (src/store/fts-merge.ts), the one write it makes: derived
 * pages only, never a row of the store's own tables.
 */
import { statSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import { failpointFails } from "../../failpoints.js";
import { mergeSearchIndex } from "../fts-merge.js";
import type { CheckpointJob, CheckpointReply } from "./checkpointer.js";
import { walCheckpoint } from "./wal-checkpoint.js";

function run(job: CheckpointJob): CheckpointReply {
  let db: Database.Database | undefined;
  try {
    db = new Database(job.path, { fileMustExist: true });
    const stats = statSync(job.path, { throwIfNoEntry: false });
    if (!stats || `${stats.dev}:${stats.ino}` !== job.key) {
      return {
        id: job.id,
        ok: false,
        message: `${job.path} is no longer the file the writer holds`,
      };
    }
    db.pragma("busy_timeout = 0");
    db.pragma(`synchronous = ${job.synchronous}`);
    const merged = mergeFirst(db, job.merge);
    const result = walCheckpoint(db, checkpointMode(job));
    return { id: job.id, ok: true, ...result, ...(merged === undefined ? {} : { merged }) };
  } catch (err) {
    return { id: job.id, ok: false, message: (err as Error).message };
  } finally {
    db?.close();
  }
}

/**
 * PASSIVE, or TRUNCATE when the WAL file has grown past the job's limit (a
 * reader held the WAL while writes went on: a backup). SQLite would cut it
 * back at the first commit that starts the WAL over, on the writer's loop;
 * here the thread does. TRUNCATE never waits: with busy_timeout 0 a reader
 * still on the WAL makes it stop where PASSIVE would, and the WAL is kept.
 */
function checkpointMode(job: CheckpointJob): "PASSIVE" | "TRUNCATE" {
  if (job.truncateAbove < 0) return "PASSIVE";
  const wal = statSync(`${job.path}-wal`, { throwIfNoEntry: false });
  return wal && wal.size > job.truncateAbove ? "TRUNCATE" : "PASSIVE";
}

/** The merge asked for, if any: whether it merged, or why it failed (the checkpoint still runs). */
function mergeFirst(db: Database.Database, pages: number): boolean | string | undefined {
  if (pages <= 0) return undefined;
  try {
    return mergeSearchIndex((sql) => db.prepare<unknown[]>(sql), pages);
  } catch (err) {
    return (err as Error).message;
  }
}

parentPort!.on("message", (job: CheckpointJob) => {
  parentPort!.postMessage(run(job));
});
// Started and loaded (better-sqlite3 included): the writer takes its write
// lock for a checkpoint only after this, so no writer waits for a start-up.
if (failpointFails("checkpoint.thread-start")) process.exit(70);
Atomics.store((workerData as { up: Int32Array }).up, 0, 1);
parentPort!.postMessage({ ready: true });
