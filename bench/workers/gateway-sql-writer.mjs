// The writer side of the gateway's fair ceiling (gateway-sql-ceiling.mjs):
// a turn's SQL writes on one raw better-sqlite3 connection with hearth's
// writer pragmas. Imported by the ceiling (writer on its event loop), or run
// as a worker thread (the writer-thread prototype of issue 15: HTTP on one
// core, SQLite on the other), answering { id, op, args } messages.
import { randomUUID } from "node:crypto";
import { isMainThread, parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import { searchMerge, writerPragmas } from "../lib/sql.mjs";

const FIND = `SELECT * FROM sessions WHERE source = ? AND chat_key = ? AND ended_at IS NULL
  ORDER BY created_at DESC LIMIT 1`;

/** { commitBatch(items, now) → results, createSession(platform, chat) → session row, close() } */
export function openWriter(path, synchronous) {
  const db = new Database(path, { fileMustExist: true });
  writerPragmas(db, synchronous);
  const findOnWriter = db.prepare(FIND);
  const getOnWriter = db.prepare("SELECT * FROM sessions WHERE id = ?");
  const createSession = db.prepare(
    `INSERT INTO sessions (id, profile, source, chat_key, created_at, updated_at, last_activity_at)
     VALUES (?, 'default', ?, ?, ?, ?, ?)`,
  );
  const readMeta = db.prepare("SELECT value FROM meta WHERE key = ?");
  const upsertMeta = db.prepare(
    `INSERT INTO meta (key, value, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
  );
  const deleteMeta = db.prepare("DELETE FROM meta WHERE key = ?");
  const byClientId = db.prepare("SELECT * FROM messages WHERE session_id = ? AND client_id = ?");
  const slot = db.prepare(
    `UPDATE sessions SET next_ordinal = next_ordinal + 1, message_count = message_count + 1,
       token_count = token_count + ?, last_activity_at = max(last_activity_at, ?), updated_at = ?
     WHERE id = ? RETURNING next_ordinal - 1 AS ordinal`,
  );
  const insert = db.prepare(
    `INSERT INTO messages (session_id, ordinal, role, content, content_type, name, tool_calls,
       tool_call_id, tokens_in, tokens_out, created_at, client_id, metadata)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const savepoint = db.prepare("SAVEPOINT hearth_item");
  const release = db.prepare("RELEASE hearth_item");
  const rollbackTo = db.prepare("ROLLBACK TO hearth_item");
  const holder = { pid: process.pid, startTicks: 0, bootId: "bench" };

  /** One message row, as the gateway writes it; returns the stored message. */
  function insertMessage(sessionId, role, content, clientId, now) {
    if (clientId !== null) {
      const existing = byClientId.get(sessionId, clientId);
      if (existing) return existing;
    }
    const { ordinal } = slot.get(0, now, now, sessionId);
    const { lastInsertRowid } = insert.run(
      sessionId,
      ordinal,
      role,
      content,
      "text",
      null,
      null,
      null,
      null,
      null,
      now,
      clientId,
      null,
    );
    // The fields of hearth's Message, so both answers are the same size.
    return {
      id: Number(lastInsertRowid),
      sessionId,
      ordinal,
      role,
      content,
      name: null,
      toolCalls: null,
      toolCallId: null,
      tokensIn: null,
      tokensOut: null,
      createdAt: now,
      active: true,
      archivedReason: null,
      clientId,
      metadata: null,
    };
  }

  /** One queued item: the inbound message (lease taken before) or the reply (lease given back after). */
  function writeItem(item, now) {
    savepoint.run();
    try {
      const key = `turn-lease:${item.sessionId}`;
      if (item.role === "user") {
        readMeta.get(key);
        const lease = { holder, kind: "gateway", turnId: item.turnId, expiresAt: now + 120_000 };
        upsertMeta.run(key, JSON.stringify(lease), now);
      }
      const message = insertMessage(item.sessionId, item.role, item.content, item.clientId, now);
      if (item.role === "assistant" && readMeta.get(key)) deleteMeta.run(key);
      release.run();
      return message;
    } catch (err) {
      rollbackTo.run();
      release.run();
      throw err;
    }
  }

  const merging = searchMerge(db);
  const batch = db.transaction((items, now) => {
    const merged = merging();
    const results = items.map((item) => {
      try {
        return { ok: true, message: writeItem(item, now) };
      } catch (err) {
        return { ok: false, error: String(err?.message ?? err) };
      }
    });
    merged();
    return results;
  });
  const create = db.transaction((platform, chat) => {
    const open = findOnWriter.get(platform, chat);
    if (open) return open.id;
    const id = randomUUID();
    const now = Date.now();
    createSession.run(id, platform, chat, now, now, now);
    return id;
  });
  return {
    commitBatch: (items, now) => batch.immediate(items, now),
    createSession: (platform, chat) => getOnWriter.get(create.immediate(platform, chat)),
    close: () => db.close(),
  };
}

if (!isMainThread && workerData?.role === "gateway-sql-writer") {
  const writer = openWriter(workerData.path, workerData.synchronous);
  parentPort.on("message", ({ id, op, args }) => {
    try {
      parentPort.postMessage({ id, ok: true, value: writer[op](...args) });
    } catch (err) {
      parentPort.postMessage({ id, ok: false, error: String(err?.message ?? err) });
    }
  });
}
