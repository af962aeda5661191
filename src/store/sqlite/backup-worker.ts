// The worker thread behind copyOnline(): SQLite's online backup of a live
// database in paced steps, on this thread's own read-only connection, then
// fsync and verification of the copy. The calling thread's event loop only
// receives messages. workerData: { source, target, busyTimeoutMs, pagesPerStep, flushEveryPages }.

import { closeSync, fdatasyncSync, fsyncSync, openSync, writeSync } from "node:fs";
import { setPriority } from "node:os";
import { dirname } from "node:path";
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import { HearthError, isHearthError } from "../../errors.js";
import { failpoint } from "../../failpoints.js";
import { verifyCopy } from "./file.js";

export interface BackupJob {
  source: string;
  target: string;
  busyTimeoutMs: number;
  pagesPerStep: number;
  flushEveryPages: number;
  /** The nice value of this thread (backup.nice). */
  nice: number;
  /** A foreign database (an import source): any application id, and no "backup" flag of ours. */
  foreign?: boolean;
}

export type BackupMessage =
  | { type: "progress"; phase: "copy" | "verify"; done: number; total: number }
  | { type: "done"; pages: number }
  | {
      type: "error";
      error: { name: string; message: string; code?: string; hint?: string; resource?: string };
    };

const job = workerData as BackupJob;
const post = (m: BackupMessage) => parentPort?.postMessage(m);

async function run(): Promise<number> {
  try {
    // Linux renices only the calling thread: the copy yields the CPU to the
    // writers and servers it runs beside; on an idle machine it changes nothing.
    if (job.nice > 0) setPriority(job.nice);
  } catch {
    // Documented fallback: where the priority cannot be lowered, the copy runs at the caller's.
  }
  // A second SQLite connection in this process shares SQLite's per-inode
  // lock bookkeeping with the store's own (one library, one process), so
  // closing it never drops their locks (F2); hearth's own locks are OFD locks.
  const src = new Database(job.source, { readonly: true, fileMustExist: true });
  let pages = 0;
  try {
    src.pragma(`busy_timeout = ${job.busyTimeoutMs}`);
    // One read transaction for the whole copy: every step reads the same
    // snapshot, so writers in other connections never restart the backup
    // and the copy is the database as of one instant.
    src.exec("BEGIN");
    src.prepare("SELECT count(*) FROM sqlite_schema").get();
    // Opened before the copy starts and closed after its connection is gone,
    // so this descriptor never drops the copy's locks (F2).
    const fd = openTarget(job.target);
    try {
      let sinceFlush = 0;
      const result = await src.backup(job.target, {
        progress({ totalPages, remainingPages }) {
          const done = totalPages - remainingPages;
          pages = totalPages;
          post({ type: "progress", phase: "copy", done, total: totalPages });
          failpoint("backup.copy-step");
          sinceFlush += job.pagesPerStep;
          if (sinceFlush >= job.flushEveryPages) {
            // Bounded dirty data: a writer's fsync elsewhere never queues
            // behind a gigabyte of this copy's writeback.
            fdatasyncSync(fd);
            sinceFlush = 0;
          }
          return job.pagesPerStep;
        },
      });
      pages = result.totalPages;
      // The backup copies page 1 verbatim, WAL flag included; the copy is one
      // file without sidecars, so it says rollback journal (as VACUUM INTO's did).
      writeSync(fd, Buffer.from([1, 1]), 0, 2, 18);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    src.exec("COMMIT");
  } finally {
    src.close();
  }
  post({ type: "progress", phase: "copy", done: pages, total: pages });
  post({ type: "progress", phase: "verify", done: 0, total: 1 });
  verifyCopy(job.target, job.foreign ? null : undefined);
  post({ type: "progress", phase: "verify", done: 1, total: 1 });
  return pages;
}

/**
 * The copy's file, created exclusively (0600). A target that cannot be
 * created (missing or unwritable directory, an existing file or link) is
 * HEARTH_OUTPUT_UNWRITABLE about the target: the source is not at fault.
 */
function openTarget(target: string): number {
  try {
    return openSync(target, "wx", 0o600);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === "ENOENT"
        ? "its directory does not exist"
        : code === "EEXIST"
          ? "it already exists (a copy never overwrites)"
          : code === "EACCES" || code === "EPERM"
            ? "its directory is not writable by this user"
            : code === "EROFS"
              ? "its filesystem is mounted read-only"
              : (err as Error).message;
    throw new HearthError("HEARTH_OUTPUT_UNWRITABLE", `cannot create the copy ${target}: ${why}`, {
      resource: target,
      hint: `choose a new file name in an existing directory you can write (ls -ld ${dirname(target)})`,
      cause: err,
    });
  }
}

run().then(
  (pages) => post({ type: "done", pages }),
  (err: unknown) => {
    const e = err as Error & { code?: unknown };
    post({
      type: "error",
      error: {
        name: e?.name ?? "Error",
        message: e?.message ?? String(err),
        ...(typeof e?.code === "string" ? { code: e.code } : {}),
        ...(isHearthError(err) && err.hint ? { hint: err.hint } : {}),
        ...(isHearthError(err) && err.resource ? { resource: err.resource } : {}),
      },
    });
  },
);
