// The torture run's checker, a short-lived process of its own (so the
// runner itself never holds the store): PRAGMA integrity_check on a
// read-only connection, and every user message that carries a clientId
// (or, for a `hearth chat` or `hearth acp` turn, which has none, the `tchat <id>` it says).
// On a quiet store (no -wal and -shm) a read-only connection would create
// them, so it checks an in-memory copy of the file instead, as doctor does.
// That copy is the file alone: right after a WAL deletion it lacks what a
// live process still holds in the removed WAL, so the runner (lib/checks.mjs)
// reads again once -wal and -shm are back before it counts anything missing.
//
//   node torture/check-store.mjs <state.db>   -> one JSON line
import { existsSync, readFileSync } from "node:fs";
import Database from "better-sqlite3";

const path = process.argv[2];
// An in-memory database cannot be in WAL mode: bytes 18-19 of the header
// (file format versions, 2 = WAL) go back to 1 in the copy.
const rollbackHeader = (buf) => {
  if (buf.length >= 20) buf[18] = buf[19] = 1;
  return buf;
};
const out = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
let db;
try {
  const live = existsSync(`${path}-wal`) && existsSync(`${path}-shm`);
  db = live
    ? new Database(path, { readonly: true, fileMustExist: true })
    : new Database(rollbackHeader(readFileSync(path)));
  db.pragma("busy_timeout = 10000");
  const integrity = db
    .pragma("integrity_check")
    .map((r) => r.integrity_check)
    .filter((r) => r !== "ok");
  const rows = db
    .prepare(
      `SELECT coalesce(client_id, substr(content, 7)) AS c, session_id AS s FROM messages
       WHERE role = 'user' AND (client_id IS NOT NULL OR content GLOB 'tchat [ka]*')`,
    )
    .raw()
    .all();
  out({ ok: true, live, integrity, rows });
} catch (err) {
  out({ ok: false, code: err.code, message: err.message });
} finally {
  db?.close();
}
