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
 * store between jobs. It never writes a row.
 */
import { statSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import { failpointFails } from "../../failpoints.js";
import type { CheckpointJob, CheckpointReply } from "./checkpointer.js";

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
    const [result] = db.pragma("wal_checkpoint(PASSIVE)") as {
      busy: number;
      log: number;
      checkpointed: number;
    }[];
    return { id: job.id, ok: true, ...result! };
  } catch (err) {
    return { id: job.id, ok: false, message: (err as Error).message };
  } finally {
    db?.close();
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
