/**
 * A SQLite database hearth did not create (another agent runtime's store,
 * an import source), read without ever writing to it: a consistent
 * snapshot in a private temporary copy, then read-only queries on the
 * copy. The source is never opened read-write; a live writer is neither
 * blocked nor put at risk (the copy is one read transaction, which WAL lets
 * writers commit beside).
 */
import { copyFileSync, lstatSync, mkdtempSync, rmSync, type Stats } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { HearthError, isHearthError } from "../../errors.js";
import { failpointFails } from "../../failpoints.js";
import { ensurePrivateDir } from "../../files/create.js";
import { inspectFilesystem } from "../../files/fs-type.js";
import { lstatOrNull, readHeader, SIDECAR_SUFFIXES } from "../../files/inspect.js";
import type { OnProgress } from "../progress.js";
import { verifyCopy } from "./file.js";
import { copyForeign } from "./online-backup.js";

/** Rows of a foreign database, as plain objects; statements run on the snapshot only. */
export interface ForeignReader {
  all(sql: string, ...params: unknown[]): Record<string, unknown>[];
  get(sql: string, ...params: unknown[]): Record<string, unknown> | undefined;
  iterate(sql: string, ...params: unknown[]): IterableIterator<Record<string, unknown>>;
}

export interface ForeignSnapshot {
  reader: ForeignReader;
  /** "backup": SQLite's online backup of a live file; "copy": a quiet file's bytes, then recovered. */
  how: "backup" | "copy";
  /** Close the snapshot and remove its temporary copy. */
  close(): void;
}

export interface ForeignSnapshotOptions {
  /** A directory of this user where the temporary copy is made (created 0700 when absent). */
  workDir: string;
  busyTimeoutMs: number;
  onProgress?: OnProgress;
}

/**
 * Snapshot the SQLite database at `source`. Refuses, writing nothing: a
 * missing or non-SQLite file, a symlink (the file or a sidecar), a file on
 * a network filesystem, a truncated or corrupt database, a source whose
 * writer holds it locked past the busy timeout.
 */
export async function snapshotForeign(
  source: string,
  options: ForeignSnapshotOptions,
): Promise<ForeignSnapshot> {
  const stats = checkSourceFile(source);
  checkFilesystem(source);
  const header = readSourceHeader(source);
  ensurePrivateDir(options.workDir);
  const dir = mkdtempSync(join(options.workDir, "import-"));
  const copy = join(dir, "source.db");
  try {
    const wal = lstatOrNull(`${source}-wal`);
    const shm = lstatOrNull(`${source}-shm`);
    let how: ForeignSnapshot["how"] = "backup";
    // A WAL file with no live connection (no -shm, or no -wal either): a
    // read-only connection would create sidecars next to the source, so
    // its bytes are copied and recovered here instead.
    if (header.wal && shm === null) {
      how = "copy";
      copyQuiet(source, stats, wal !== null, copy);
    } else {
      await copyForeign(source, copy, {
        busyTimeoutMs: options.busyTimeoutMs,
        ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      });
    }
    const db = new Database(copy, { readonly: true, fileMustExist: true });
    return {
      how,
      reader: {
        all: (sql, ...p) => db.prepare(sql).all(...p) as Record<string, unknown>[],
        get: (sql, ...p) => db.prepare(sql).get(...p) as Record<string, unknown> | undefined,
        iterate: (sql, ...p) =>
          db.prepare(sql).iterate(...p) as IterableIterator<Record<string, unknown>>,
      },
      close() {
        db.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw sourceError(err, source);
  }
}

function checkSourceFile(source: string): Stats {
  for (const path of [source, ...SIDECAR_SUFFIXES.map((s) => source + s)]) {
    const st = lstatOrNull(path);
    if (st === null) {
      if (path === source)
        throw invalid(
          source,
          `${source} does not exist`,
          "give the path of the state.db to import",
        );
      continue;
    }
    if (st.isSymbolicLink())
      throw new HearthError(
        "HEARTH_PATH_SYMLINK",
        `refusing to import ${path}: it is a symbolic link`,
        {
          resource: path,
          hint: `give the real file's path (readlink -f ${path}), after checking it is the one you mean`,
        },
      );
    if (!st.isFile())
      throw new HearthError(
        "HEARTH_PATH_NOT_REGULAR",
        `refusing to import ${path}: it is not a regular file`,
        {
          resource: path,
          hint: "give the path of the state.db file itself",
        },
      );
  }
  return lstatSync(source);
}

/** A network filesystem is refused as hearth refuses one for its own store (files/fs-type.ts). */
function checkFilesystem(source: string): void {
  const reason = failpointFails("import.source-fs")
    ? "mountinfo reports a nfs filesystem"
    : inspectFilesystem(source).walUnsafeReason;
  if (reason === undefined) return;
  throw new HearthError(
    "HEARTH_IMPORT_UNSAFE_FS",
    `refusing to import ${source}: ${reason}, where SQLite's locks cannot be trusted to give a consistent snapshot`,
    {
      resource: source,
      hint: "copy the file (and its -wal) to a local disk while its runtime is stopped, and import the copy",
    },
  );
}

function readSourceHeader(source: string) {
  try {
    const header = readHeader(source);
    if (header.empty)
      throw invalid(source, `${source} is empty`, "give the path of a non-empty state.db");
    return header;
  } catch (err) {
    if (isHearthError(err, "HEARTH_NOT_SQLITE"))
      throw invalid(
        source,
        err.message.replace("refusing", "refusing to import"),
        SOURCE_HINT,
        err,
      );
    throw err;
  }
}

/**
 * Copy a WAL database no connection holds (its bytes, and its -wal when
 * there is one), then let SQLite recover the copy. The files must not
 * change while they are copied; a runtime starting meanwhile makes this
 * busy, never a torn copy.
 */
function copyQuiet(source: string, before: Stats, withWal: boolean, copy: string): void {
  const walBefore = withWal ? lstatOrNull(`${source}-wal`) : null;
  copyFileSync(source, copy);
  if (withWal) copyFileSync(`${source}-wal`, `${copy}-wal`);
  const after = lstatOrNull(source);
  const walAfter = withWal ? lstatOrNull(`${source}-wal`) : null;
  const same = (a: Stats | null, b: Stats | null) =>
    a === b || (a !== null && b !== null && a.size === b.size && a.mtimeMs === b.mtimeMs);
  if (!same(before, after) || !same(walBefore, walAfter) || lstatOrNull(`${source}-shm`) !== null) {
    throw new HearthError("HEARTH_IMPORT_SOURCE_BUSY", `${source} changed while it was copied`, {
      resource: source,
      hint: "run the import again: a runtime opened the file meanwhile, and the next try takes a live snapshot",
    });
  }
  // Recovery of the copied WAL, then one file in rollback mode (nothing else ever opens it).
  const db = new Database(copy, { fileMustExist: true });
  try {
    db.pragma("journal_mode = DELETE");
  } finally {
    db.close();
  }
  verifyCopy(copy, null);
}

const SOURCE_HINT =
  "check the path; a damaged store can be repaired by its own runtime first, or restored from its backup";

function invalid(source: string, message: string, hint: string, cause?: unknown): HearthError {
  return new HearthError("HEARTH_IMPORT_SOURCE_INVALID", message, {
    resource: source,
    hint,
    ...(cause === undefined ? {} : { cause }),
  });
}

/** The copy's failures, said about the source: corrupt, or held locked by its writer. */
function sourceError(err: unknown, source: string): unknown {
  const hearth = isHearthError(err);
  const sqlite = hearth ? err.sqliteCode : (err as { code?: unknown } | null)?.code;
  const code = typeof sqlite === "string" ? sqlite : "";
  const message = (err as Error).message;
  if (
    (hearth && err.code === "HEARTH_BACKUP_INVALID") ||
    code.startsWith("SQLITE_CORRUPT") ||
    code === "SQLITE_NOTADB"
  )
    return invalid(
      source,
      `refusing to import ${source}: it is truncated or corrupt (${message})`,
      SOURCE_HINT,
      err,
    );
  if (
    (hearth && err.code === "HEARTH_BUSY") ||
    code.startsWith("SQLITE_BUSY") ||
    code.startsWith("SQLITE_READONLY")
  )
    return new HearthError(
      "HEARTH_IMPORT_SOURCE_BUSY",
      `refusing to import ${source}: its writer kept it locked (${message}); nothing was imported`,
      {
        resource: source,
        hint: "run the import again in a quieter moment; a crashed rollback journal is rolled back by the runtime's next start",
        cause: err,
      },
    );
  return err;
}
