import { dirname } from "node:path";
import { pathToFileURL } from "node:url";
import { nodeWorkerThreads } from "../../builtins.js";
import { HearthError, type HearthErrorCode, isHearthError } from "../../errors.js";
import { builtFile } from "../../files/built.js";
import { diskIsFull, noSpaceError } from "../../no-space.js";
import { raiseBackupFlag } from "../../process/backup-flag.js";
import { fromSqliteError } from "../../sqlite-errors.js";
import type { OnProgress } from "../progress.js";
import type { BackupJob, BackupMessage } from "./backup-worker.js";

/** Pages per backup step: 4 MiB at the default 4 KiB page. */
const PAGES_PER_STEP = 1024;
/** The copy is flushed to disk every this many pages (32 MiB at 4 KiB). */
const FLUSH_EVERY_PAGES = 8192;

/**
 * A consistent, fsync'd and verified copy of the live database at `source`,
 * written to `target` (which must not exist) by SQLite's online backup in
 * paced steps on a worker thread: the caller's event loop never runs a step,
 * the fsync or the quick_check. The copy is the database as of one instant
 * (one read transaction), writers keep committing meanwhile, and its pages
 * are copied as they are (free pages included; nothing is compacted).
 * Rejects with HEARTH_BACKUP_INVALID when the copy fails verification.
 * While it copies, it holds the backup flag of `profileDir` up
 * (src/process/backup-flag.ts): the profile's writers then fsync off the loop.
 */
export async function copyOnline(
  source: string,
  target: string,
  options: { busyTimeoutMs: number; nice: number; profileDir: string; onProgress?: OnProgress },
): Promise<{ pages: number }> {
  const lower = await raiseBackupFlag(options.profileDir);
  try {
    return await copyOnThread(source, target, options);
  } finally {
    lower();
  }
}

/**
 * The same consistent copy of a database that is not a hearth store (an
 * import source): one read transaction on a read-only connection, in paced
 * steps on a worker thread, quick_check'd; any application id. Raises no
 * flag: the source's writers are not hearth's.
 */
export function copyForeign(
  source: string,
  target: string,
  options: { busyTimeoutMs: number; onProgress?: OnProgress },
): Promise<{ pages: number }> {
  return copyOnThread(source, target, { ...options, nice: 0, foreign: true, op: "import" });
}

function copyOnThread(
  source: string,
  target: string,
  options: {
    busyTimeoutMs: number;
    nice: number;
    onProgress?: OnProgress;
    foreign?: boolean;
    op?: string;
  },
): Promise<{ pages: number }> {
  const job: BackupJob = {
    source,
    target,
    busyTimeoutMs: options.busyTimeoutMs,
    pagesPerStep: PAGES_PER_STEP,
    flushEveryPages: FLUSH_EVERY_PAGES,
    nice: options.nice,
    foreign: options.foreign === true,
  };
  return new Promise((resolve, reject) => {
    const worker = new (nodeWorkerThreads().Worker)(workerFile(), { workerData: job });
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      fn();
    };
    worker.on("message", (m: BackupMessage) => {
      if (m.type === "progress")
        options.onProgress?.({
          op: options.op ?? "backup",
          phase: m.phase,
          done: m.done,
          total: m.total,
          unit: m.phase === "copy" ? "pages" : "steps",
        });
      else if (m.type === "done") settle(() => resolve({ pages: m.pages }));
      else settle(() => reject(onTarget(rebuild(m.error, source), target)));
    });
    worker.on("error", (err) =>
      settle(() => reject(onTarget(fromSqliteError(err, source), target))),
    );
    worker.on("exit", (code) =>
      settle(() =>
        reject(
          new HearthError("HEARTH_INTERNAL", `the backup worker of ${source} exited (${code})`, {
            resource: source,
          }),
        ),
      ),
    );
  });
}

/**
 * The copy only writes to `target` (the source is read through a read-only
 * connection), so a full disk during the copy is the target's disk: named
 * as such, never as the store's (whose writes go on).
 */
function onTarget(err: Error, target: string): Error {
  const sqliteCode = isHearthError(err) ? err.sqliteCode : undefined;
  const full =
    isHearthError(err, "HEARTH_NO_SPACE") ||
    (sqliteCode?.startsWith("SQLITE_IOERR") === true && diskIsFull(dirname(target)));
  return full
    ? noSpaceError("copy", dirname(target), isHearthError(err) && err.cause ? err.cause : err)
    : err;
}

/** The worker's error, as the HearthError the caller would have got on its own thread. */
function rebuild(e: Extract<BackupMessage, { type: "error" }>["error"], source: string): Error {
  if (e.name === "HearthError" && e.code)
    return new HearthError(e.code as HearthErrorCode, e.message, {
      ...(e.resource ? { resource: e.resource } : {}),
      ...(e.hint ? { hint: e.hint } : {}),
    });
  const err = Object.assign(new Error(e.message), e.code ? { code: e.code } : {});
  err.name = e.name;
  return fromSqliteError(err, source);
}

/** The worker's script, the built one in dist/ (src/files/built.ts says why). */
function workerFile(): URL {
  return pathToFileURL(builtFile("store/sqlite/backup-worker.js"));
}
