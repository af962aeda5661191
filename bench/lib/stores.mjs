// Temporary hearth homes and stores. Every store is created by hearth (so
// the schema, FTS triggers and application id are the library's own); bulk
// data goes in through raw SQL at synchronous = OFF, for setup only.
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { openStore } from "../../dist/index.js";
import { messages } from "./corpus.mjs";
import { INSERT_SQL } from "./sql.mjs";

const roots = new Set();

/** A fresh directory under os.tmpdir(), removed by cleanupAll(). */
export function tempDir(label) {
  const dir = mkdtempSync(join(tmpdir(), `hearth-bench-${label}-`));
  roots.add(dir);
  return dir;
}

export function removeDir(dir) {
  rmSync(dir, { recursive: true, force: true });
  roots.delete(dir);
}

export function cleanupAll() {
  for (const dir of roots) rmSync(dir, { recursive: true, force: true });
  roots.clear();
}

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, () => {
    cleanupAll();
    process.exit(130);
  });
}

/**
 * A new hearth home whose default store hearth has created (empty, schema
 * applied). Returns { home, path }.
 */
export async function newStore(label, synchronous = "full") {
  const home = tempDir(label);
  const store = await openStore({ home, config: { durability: { synchronous } } });
  const path = store.path;
  await store.close();
  return { home, path };
}

/**
 * Empty sessions `s-0` … `s-<count-1>` for the append workloads, in one raw
 * transaction (creating them through hearth would cost a commit each).
 */
export function addSessions(path, count, prefix = "s") {
  const db = new Database(path, { fileMustExist: true });
  const insert = db.prepare(
    `INSERT INTO sessions (id, profile, source, created_at, updated_at, last_activity_at)
     VALUES (?, 'default', 'bench', ?, ?, ?)`,
  );
  const ids = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  const now = Date.now();
  db.transaction(() => {
    for (const id of ids) insert.run(id, now, now, now);
  })();
  db.close();
  return ids;
}

/**
 * Fill a hearth-created store with `total` messages over `sessions`
 * sessions (each gets a contiguous transcript), text from the deterministic
 * generator. Raw SQL, synchronous = OFF, large transactions. For speed the
 * FTS insert trigger is dropped during the load, the index is built with
 * FTS5's 'rebuild', and the trigger is re-created from its own stored SQL,
 * so the schema ends byte-identical to hearth's. Ends with a TRUNCATE
 * checkpoint so the store starts with an empty WAL.
 *
 * A store that already holds messages grows: pass `firstSession` (the
 * number of sessions it has) so the new ones are `s-<firstSession>` on, and
 * only the new rows are indexed (the trigger's INSERT, as one statement).
 */
export function bulkFill(path, { total, sessions, seed, shapes, onProgress, firstSession = 0 }) {
  const db = new Database(path, { fileMustExist: true });
  db.pragma("synchronous = OFF");
  db.pragma("cache_size = -262144");
  const trigger = db
    .prepare(
      "SELECT sql FROM sqlite_schema WHERE type = 'trigger' AND name = 'messages_fts_insert'",
    )
    .pluck()
    .get();
  const indexedUpTo = db.prepare("SELECT coalesce(max(id), 0) FROM messages").pluck().get();
  db.exec("DROP TRIGGER messages_fts_insert");
  const gen = messages(seed, shapes);
  const insertSession = db.prepare(
    `INSERT INTO sessions (id, profile, source, created_at, updated_at, last_activity_at,
       message_count, next_ordinal) VALUES (?, 'default', 'bench', ?, ?, ?, ?, ?)`,
  );
  const insert = db.prepare(INSERT_SQL);
  const base = Date.UTC(2025, 0, 1);
  const per = Math.floor(total / sessions);
  const ids = [];
  let written = 0;
  const chunk = db.transaction((from, to) => {
    for (let s = from; s < to; s++) {
      const id = `s-${firstSession + s}`;
      const n = s === sessions - 1 ? total - per * (sessions - 1) : per;
      const t0 = base + (firstSession + s) * 60_000;
      insertSession.run(id, t0, t0 + n, t0 + n, n, n);
      for (let o = 0; o < n; o++) {
        const m = gen.next();
        insert.run(id, o, m.role, m.content, "text", null, null, null, null, null, t0 + o, null);
      }
      ids.push(id);
      written += n;
    }
  });
  const step = Math.max(1, Math.floor(20_000 / Math.max(1, per)));
  for (let s = 0; s < sessions; s += step) {
    chunk(s, Math.min(sessions, s + step));
    onProgress?.(written, total);
  }
  // Indexed in one go with FTS5's automatic merge on, as a store that grew
  // by hearth's writes is kept merged (src/store/sqlite/fts-merge.ts); then the
  // store's own setting (off, schema version 9) again.
  const automerge = db
    .prepare("SELECT v FROM messages_fts_config WHERE k = 'automerge'")
    .pluck()
    .get();
  db.exec("INSERT INTO messages_fts (messages_fts, rank) VALUES ('automerge', 4)");
  if (indexedUpTo === 0) db.exec("INSERT INTO messages_fts (messages_fts) VALUES ('rebuild')");
  else
    db.prepare(
      "INSERT INTO messages_fts (rowid, content) SELECT id, content FROM messages WHERE id > ?",
    ).run(indexedUpTo);
  // (FTS5 refuses a bound value for a setting: the number is written in.)
  if (automerge !== undefined)
    db.exec(
      `INSERT INTO messages_fts (messages_fts, rank) VALUES ('automerge', ${Number(automerge)})`,
    );
  db.exec(trigger);
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
  return ids;
}

/** Size of a file, 0 when absent. */
export function fileSize(path) {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** Database plus WAL, in bytes. */
export function storeSize(path) {
  return fileSize(path) + fileSize(`${path}-wal`);
}
