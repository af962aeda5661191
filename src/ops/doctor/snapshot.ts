import Database from "better-sqlite3";
import { lstatOrNull } from "../../files/inspect.js";
import { openInMemory } from "../sqlite-file.js";

export interface Snapshot {
  db: Database.Database;
  /**
   * "live": a read-only connection on a store whose -wal and -shm exist (or
   * a rollback-journal store with no hot journal): nothing is created; the
   * checks run in one read transaction, a consistent snapshot even while a
   * writer commits. "copy": the database file read into memory, for stores
   * where a connection would create or change a file (a quiet WAL store, a
   * half-present WAL, a hot journal).
   */
  kind: "live" | "copy";
  note: string | undefined;
  close(): void;
}

/**
 * A read-only view of the store that creates, deletes and writes no file
 * (M1). The only side effect of a live view is SQLite's own read-mark in the
 * -shm shared memory, which every reader takes.
 */
export function openSnapshot(path: string, walHeader: boolean): Snapshot {
  const wal = lstatOrNull(`${path}-wal`);
  const shm = lstatOrNull(`${path}-shm`);
  const journal = lstatOrNull(`${path}-journal`);
  const live = walHeader ? wal !== null && shm !== null : journal === null;
  if (live) {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    db.pragma("query_only = ON");
    return { db, kind: "live", note: undefined, close: () => db.close() };
  }
  const note = walHeader
    ? wal || shm
      ? `only one of -wal and -shm exists; checked the database file alone`
      : undefined
    : "a hot journal (-journal) is present: the next writer rolls back a crashed transaction; checked the database file as it is";
  const db = openInMemory(path);
  return { db, kind: "copy", note, close: () => db.close() };
}
