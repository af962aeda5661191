import { closeSync, fstatSync, openSync, readSync, rmSync } from "node:fs";
import Database from "better-sqlite3";
import { HearthError } from "../../errors.js";
import { HEARTH_APPLICATION_ID, SIDECAR_SUFFIXES } from "../../files/inspect.js";

/**
 * A database file opened in memory: its bytes read (again while a
 * checkpoint changes them underneath), the WAL header bytes set to legacy
 * (an in-memory database cannot use WAL). Reading this way creates no
 * sidecar next to the file, which any connection to a WAL file would.
 */
export function openInMemory(path: string): Database.Database {
  return new Database(readStable(path));
}

function readStable(path: string): Buffer {
  for (let attempt = 0; attempt < 3; attempt++) {
    const fd = openSync(path, "r");
    try {
      const before = fstatSync(fd);
      const buf = Buffer.alloc(before.size);
      let off = 0;
      while (off < buf.length) {
        const n = readSync(fd, buf, off, buf.length - off, off);
        if (n === 0) break;
        off += n;
      }
      const after = fstatSync(fd);
      if (after.size === before.size && after.mtimeMs === before.mtimeMs && off === buf.length) {
        if (buf.length >= 20 && buf[18] === 2) {
          buf[18] = 1;
          buf[19] = 1;
        }
        return buf;
      }
    } finally {
      closeSync(fd);
    }
  }
  throw new HearthError("HEARTH_BUSY", `${path} kept changing while it was read`, {
    resource: path,
    hint: "try again; a writer committing without pause keeps it changing",
  });
}

/**
 * Give a file that no other process knows yet (a restore or repair copy)
 * the configured journal mode, then remove the sidecars that left behind.
 */
export function setJournalMode(path: string, mode: string, synchronous: string): void {
  const db = new Database(path, { fileMustExist: true });
  try {
    db.pragma(`synchronous = ${synchronous}`);
    db.pragma(`journal_mode = ${mode}`);
  } finally {
    db.close();
  }
  for (const suffix of SIDECAR_SUFFIXES) rmSync(path + suffix, { force: true });
}

/**
 * quick_check and application id of a copy, read through a connection that
 * writes nothing; `applicationId` null: a foreign database (an import source), any id.
 */
export function verifyCopy(
  path: string,
  applicationId: number | null = HEARTH_APPLICATION_ID,
): void {
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    const appId = Number(db.pragma("application_id", { simple: true }));
    const problems = (db.pragma("quick_check") as { quick_check: string }[])
      .map((r) => r.quick_check)
      .filter((r) => r !== "ok");
    const foreignId = applicationId !== null && appId !== applicationId;
    if (foreignId || problems.length > 0) {
      throw new HearthError(
        "HEARTH_BACKUP_INVALID",
        `${path} failed verification: ${foreignId ? `application_id ${appId} is not hearth's` : problems.slice(0, 3).join("; ")}`,
        { resource: path, hint: "hearth doctor   # checks the store itself" },
      );
    }
  } catch (err) {
    if (err instanceof HearthError) throw err;
    throw new HearthError(
      "HEARTH_BACKUP_INVALID",
      `${path} cannot be read as a hearth store: ${(err as Error).message}`,
      { resource: path, cause: err },
    );
  } finally {
    db?.close();
  }
}

/** quick_check problems of a WAL-mode file, checked on an in-memory copy (a connection would create sidecars). */
export function quickCheckInMemory(path: string): string[] {
  const db = openInMemory(path);
  try {
    return (db.pragma("quick_check") as { quick_check: string }[])
      .map((r) => r.quick_check)
      .filter((r) => r !== "ok");
  } finally {
    db.close();
  }
}
