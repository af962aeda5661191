import Database from "better-sqlite3";
import { lstatOrNull } from "../../files/inspect.js";
import { JOB_HEALTH_SQL, toJobHealth } from "../run-rows.js";
import type { JobHealth } from "../runs.js";
import type { StoreCounts } from "../types.js";
import { openInMemory } from "./file.js";
import { searchDegradedReason } from "./fts-merge.js";

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

/** What diagnosis reads from the database, in one read transaction (one consistent snapshot). */
export interface ContentReport {
  /** How the database was read (see Snapshot.kind), and why when not live. */
  snapshot: "live" | "copy";
  note: string | undefined;
  schemaVersion: number;
  applicationId: number;
  /** quick_check problems; empty when it passed. */
  problems: string[];
  counts: StoreCounts;
  /** Sessions without any message row (an EXISTS probe, never a counter: D2). */
  emptySessions: number;
  /** Handoffs pending or running whose last update is older than `staleBefore`. */
  staleHandoffs: number;
  /** The search index's degraded mark, or null when it is in service. */
  searchDegraded: string | null;
  /** Rows in sqlite_stat4 (0 when there is no such table): samples the planner plans bound values by. */
  plannerSamples: number;
  /** The synchronous level a connection set to the configured one reads back. */
  synchronousProbe: string;
  /** Last outcome and consecutive failures of each scheduled job (empty before schema 4). */
  jobs: JobHealth[];
}

/**
 * Read-only diagnosis of a store's content (M1): opens a snapshot that
 * creates, deletes and writes no file, reads everything in one read
 * transaction, and closes it.
 */
export function inspectContent(
  path: string,
  walHeader: boolean,
  options: { synchronous: string; staleBefore: number },
): ContentReport {
  const snapshot = openSnapshot(path, walHeader);
  try {
    const { db } = snapshot;
    db.pragma(`synchronous = ${options.synchronous.toUpperCase()}`);
    const level = Number(db.pragma("synchronous", { simple: true }));
    const synchronousProbe = ["off", "normal", "full", "extra"][level] ?? String(level);
    const schemaVersion = Number(db.pragma("user_version", { simple: true }));
    const applicationId = Number(db.pragma("application_id", { simple: true }));
    db.exec("BEGIN");
    try {
      const problems = (db.pragma("quick_check") as { quick_check: string }[])
        .map((r) => r.quick_check)
        .filter((r) => r !== "ok");
      const scalar = (sql: string, ...params: unknown[]) =>
        Number(
          db
            .prepare(sql)
            .pluck()
            .get(...params),
        );
      const sessions = scalar("SELECT count(*) FROM sessions");
      const messages = scalar("SELECT count(*) FROM messages");
      const active = scalar("SELECT count(*) FROM messages WHERE active = 1");
      const degraded = searchDegradedReason((sql) => db.prepare<unknown[]>(sql));
      return {
        snapshot: snapshot.kind,
        note: snapshot.note,
        schemaVersion,
        applicationId,
        problems,
        counts: { sessions, messages, activeMessages: active, archivedMessages: messages - active },
        emptySessions: scalar(
          "SELECT count(*) FROM sessions s WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)",
        ),
        staleHandoffs: scalar(
          "SELECT count(*) FROM sessions WHERE handoff_state IN ('pending', 'running') AND handoff_updated_at < ?",
          options.staleBefore,
        ),
        searchDegraded: degraded,
        plannerSamples:
          scalar("SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_stat4'") > 0
            ? scalar("SELECT count(*) FROM sqlite_stat4")
            : 0,
        synchronousProbe,
        jobs:
          scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'job_runs'") >
          0
            ? (db.prepare(JOB_HEALTH_SQL).all() as Record<string, unknown>[]).map(toJobHealth)
            : [],
      };
    } finally {
      db.exec("COMMIT");
    }
  } finally {
    snapshot.close();
  }
}
