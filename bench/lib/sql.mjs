// The SQL hearth runs (src/store/sqlite/messages.ts, sessions.ts, search.ts), for
// the raw better-sqlite3 baselines. Keep in step with the library: limits
// are bound as `LIMIT +?`, as hearth binds them (a bare bound limit is
// prepared again on every call; docs/benchmarks-history.md).
import { closeSync, fsyncSync, openSync, renameSync } from "node:fs";
import Database from "better-sqlite3";
import { MergeDebt, mergeSearchIndex, totalChanges } from "../../dist/store/sqlite/fts-merge.js";

export const SLOT_SQL = `UPDATE sessions SET next_ordinal = next_ordinal + 1, message_count = message_count + 1,
   token_count = token_count + ?, last_activity_at = max(last_activity_at, ?), updated_at = ?
 WHERE id = ? RETURNING next_ordinal - 1 AS ordinal`;
export const INSERT_SQL = `INSERT INTO messages (session_id, ordinal, role, content, content_type, name, tool_calls,
   tool_call_id, tokens_in, tokens_out, created_at, client_id)
 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
export const LOAD_SQL =
  "SELECT * FROM messages WHERE session_id = ? AND active = 1 ORDER BY ordinal";
export const LIST_SQL = `SELECT * FROM sessions WHERE archived = 0 AND hidden = 0
      ORDER BY last_activity_at DESC, id DESC LIMIT +?`;
/** search.ts refuses to search a damaged index: it reads this flag first. */
export const DEGRADED_SQL = "SELECT value FROM meta WHERE key = 'fts_degraded'";
export const SEARCH_SQL = `SELECT m.session_id, m.id, m.ordinal, m.role, m.active, m.created_at,
              snippet(messages_fts, 0, '[', ']', '…', 12) AS snippet
       FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid
       WHERE messages_fts MATCH ? AND m.active = 1
       ORDER BY rank LIMIT +?`;

/** The pragmas hearth sets on its writer connection (src/store/sqlite/connection.ts). */
export function writerPragmas(db, synchronous, busyTimeoutMs = 5000) {
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  db.pragma(`synchronous = ${synchronous.toUpperCase()}`);
  db.pragma("foreign_keys = ON");
  db.pragma("journal_size_limit = 67108864");
  db.pragma("wal_autocheckpoint = 1000");
}

/**
 * The search-index merges hearth does (src/store/sqlite/fts-merge.ts: FTS5's
 * automatic merge is off in hearth's schema), on a raw connection, the way
 * a writer without a checkpoint thread does them: `const done =
 * merging(); … writes …; done()` inside the transaction adds the debt of
 * the rows it changed and merges a chunk once one is owed. A ceiling
 * writing to a hearth store does this work too, or it would do less.
 */
export function searchMerge(db, prepare = preparedOnce(db)) {
  const debt = new MergeDebt();
  return () => {
    const before = totalChanges(prepare);
    return () => {
      debt.add(totalChanges(prepare) - before);
      mergeSearchIndex(prepare, debt.take());
    };
  };
}

/** `db.prepare`, each statement prepared on first use and kept. */
function preparedOnce(db) {
  const cache = new Map();
  return (sql) => {
    let s = cache.get(sql);
    if (!s) {
      s = db.prepare(sql);
      cache.set(sql, s);
    }
    return s;
  };
}

/**
 * Statements of one connection, prepared on first use and kept, with the
 * append hearth does (slot, then insert, then the search-index merge).
 */
export function statements(db) {
  const stmt = preparedOnce(db);
  let merge; // set up on the first write: readers never need it
  const merging = () => {
    merge ??= searchMerge(db, stmt);
    return merge();
  };
  const one = (sessionId, m) => {
    const now = Date.now();
    const { ordinal } = stmt(SLOT_SQL).get(0, now, now, sessionId);
    const insert = stmt(INSERT_SQL);
    insert.run(
      sessionId,
      ordinal,
      m.role,
      m.content,
      "text",
      null,
      null,
      null,
      null,
      null,
      now,
      null,
    );
  };
  return {
    db,
    appendOne: db.transaction((sessionId, m) => {
      const merged = merging();
      one(sessionId, m);
      merged();
    }),
    appendMany: db.transaction((sessionId, list) => {
      const merged = merging();
      for (const m of list) one(sessionId, m);
      merged();
    }),
    load: (sessionId) => stmt(LOAD_SQL).all(sessionId),
    list: (limit) => stmt(LIST_SQL).all(limit),
    search: (fts, limit) => {
      if (stmt(DEGRADED_SQL).get()) throw new Error("search index degraded");
      return stmt(SEARCH_SQL).all(fts, limit);
    },
  };
}

/**
 * The ceiling: one long-lived connection, hearth's pragmas, BEGIN IMMEDIATE.
 * busy_timeout is SQLite's own (synchronous) wait, as a raw program has it.
 */
export function ceilingWriter(path, synchronous) {
  const db = new Database(path, { fileMustExist: true });
  writerPragmas(db, synchronous);
  const s = statements(db);
  return {
    db,
    append: (sessionId, m) => s.appendOne.immediate(sessionId, m),
    appendBatch: (sessionId, list) => s.appendMany.immediate(sessionId, list),
    close: () => db.close(),
  };
}

/** A read-only connection for the ceiling's reads. */
export function ceilingReader(path) {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  db.pragma("busy_timeout = 5000");
  const s = statements(db);
  return {
    db,
    load: (sessionId) => s.load(sessionId),
    list: (limit) => s.list(limit + 1),
    search: (fts, limit = 20) => s.search(fts, limit),
    close: () => db.close(),
  };
}

/**
 * The naive way: a new read-write connection per operation with the driver's
 * defaults (better-sqlite3's 5 s busy timeout), the level set explicitly so
 * only the connection handling differs, a deferred BEGIN, reads on that
 * same read-write connection, then close.
 */
export function naive(path, synchronous) {
  const once = (fn) => {
    const db = new Database(path, { fileMustExist: true });
    try {
      db.pragma(`synchronous = ${synchronous.toUpperCase()}`);
      return fn(statements(db));
    } finally {
      db.close();
    }
  };
  return {
    append: (sessionId, m) => once((s) => s.appendOne(sessionId, m)),
    appendBatch: (sessionId, list) => once((s) => s.appendMany(sessionId, list)),
    load: (sessionId) => once((s) => s.load(sessionId)),
    list: (limit) => once((s) => s.list(limit + 1)),
    search: (fts, limit = 20) => once((s) => s.search(fts, limit)),
    close: () => {},
  };
}

/**
 * A consistent copy the way a raw program does it (the same steps as
 * hearth's backup): VACUUM INTO a staging file, fsync, quick_check, rename.
 */
export function rawBackup(db, target) {
  const staging = `${target}.staging`;
  db.prepare("VACUUM INTO ?").run(staging);
  const fd = openSync(staging, "r");
  fsyncSync(fd);
  closeSync(fd);
  const copy = new Database(staging, { readonly: true, fileMustExist: true });
  const check = copy.pragma("quick_check", { simple: true });
  copy.close();
  if (check !== "ok") throw new Error(`backup copy failed quick_check: ${check}`);
  renameSync(staging, target);
}
