// The gateway's fair ceiling (workloads 3 and 8): a minimal server on the
// same HTTP framework (fastify, the gateway's own copy) doing a turn's SQL
// work with raw better-sqlite3, and nothing else. argv[2] is JSON:
// { path, synchronous }: a store hearth created (its schema, FTS5 triggers
// included), opened with hearth's writer pragmas (WAL, the level given).
//
// POST /v1/messages {platform, chat, content, clientId} does what a gateway
// turn with the echo responder does to the store (src/turn/run.ts,
// src/turn/group-commit.ts, src/store/messages.ts appendMany, sessions.ts):
//   1. find the chat's open session on a read-only connection; when there is
//      none, create it in a BEGIN IMMEDIATE transaction of its own;
//   2. the inbound message, group-committed: in a savepoint, read the turn
//      lease row (meta `turn-lease:<session>`), write it (upsert, the lease
//      JSON), look the clientId up, take the next ordinal (UPDATE sessions
//      … RETURNING), INSERT the message (the FTS5 trigger indexes it);
//   3. the reply `echo: <content>`, group-committed: in a savepoint, the
//      ordinal, the INSERT, read the lease row and DELETE it;
//   4. read the session again (read-only connection) and answer
//      {profile, session, message, reply} as JSON.
// Group commit as the gateway's: what arrives within a tick (setImmediate)
// is one BEGIN IMMEDIATE … COMMIT, and every caller is answered only after
// it. No validation schema, auth, hooks, metrics, lock or generation check:
// that is the gateway's own cost, which this ceiling measures.
// Prints {"listening":true,"address"}, then {"ready":true}; runs until
// {"op":"exit"} or stdin closes.
import { randomUUID } from "node:crypto";
import Database from "better-sqlite3";
import Fastify from "fastify";
import { emit, serve } from "../lib/procs.mjs";
import { writerPragmas } from "../lib/sql.mjs";

const { path, synchronous } = JSON.parse(process.argv[2]);
const writer = new Database(path, { fileMustExist: true });
writerPragmas(writer, synchronous);
const reader = new Database(path, { readonly: true, fileMustExist: true });
reader.pragma("busy_timeout = 5000");

const FIND = `SELECT * FROM sessions WHERE source = ? AND chat_key = ? AND ended_at IS NULL
  ORDER BY created_at DESC LIMIT 1`;
const find = reader.prepare(FIND);
const findOnWriter = writer.prepare(FIND);
const getSession = reader.prepare("SELECT * FROM sessions WHERE id = ?");
const getOnWriter = writer.prepare("SELECT * FROM sessions WHERE id = ?");
const createSession = writer.prepare(
  `INSERT INTO sessions (id, profile, source, chat_key, created_at, updated_at, last_activity_at)
   VALUES (?, 'default', ?, ?, ?, ?, ?)`,
);
const readMeta = writer.prepare("SELECT value FROM meta WHERE key = ?");
const upsertMeta = writer.prepare(
  `INSERT INTO meta (key, value, updated_at) VALUES (?, ?, ?)
   ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
);
const deleteMeta = writer.prepare("DELETE FROM meta WHERE key = ?");
const byClientId = writer.prepare("SELECT * FROM messages WHERE session_id = ? AND client_id = ?");
const slot = writer.prepare(
  `UPDATE sessions SET next_ordinal = next_ordinal + 1, message_count = message_count + 1,
     token_count = token_count + ?, last_activity_at = max(last_activity_at, ?), updated_at = ?
   WHERE id = ? RETURNING next_ordinal - 1 AS ordinal`,
);
const insert = writer.prepare(
  `INSERT INTO messages (session_id, ordinal, role, content, content_type, name, tool_calls,
     tool_call_id, tokens_in, tokens_out, created_at, client_id, metadata)
   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
);
const savepoint = writer.prepare("SAVEPOINT hearth_item");
const release = writer.prepare("RELEASE hearth_item");
const rollbackTo = writer.prepare("ROLLBACK TO hearth_item");

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
  return {
    id: Number(lastInsertRowid),
    sessionId,
    ordinal,
    role,
    content,
    clientId,
    createdAt: now,
  };
}

/** One queued item: the inbound message (lease taken before) or the reply (lease given back after). */
function writeItem(item, now) {
  savepoint.run();
  try {
    const key = `turn-lease:${item.sessionId}`;
    if (item.role === "user") {
      readMeta.get(key);
      const lease = { holder, kind: "gateway", turnId: item.turnId, expiresAt: now + 60_000 };
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

const commitBatch = writer.transaction((batch, now) =>
  batch.map((item) => {
    try {
      return { ok: true, message: writeItem(item, now) };
    } catch (error) {
      return { ok: false, error };
    }
  }),
);

let queue = [];
let scheduled = false;
let batches = 0;
let batched = 0;

function flush() {
  scheduled = false;
  const batch = queue;
  queue = [];
  let results;
  try {
    results = commitBatch.immediate(batch, Date.now());
  } catch (error) {
    results = batch.map(() => ({ ok: false, error }));
  }
  batches++;
  batched += batch.length;
  results.forEach((r, i) => {
    if (r.ok) batch[i].resolve(r.message);
    else batch[i].reject(r.error);
  });
}

function append(item) {
  return new Promise((resolve, reject) => {
    queue.push({ ...item, resolve, reject });
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  });
}

const createOwn = writer.transaction((platform, chat) => {
  const open = findOnWriter.get(platform, chat);
  if (open) return open.id;
  const id = randomUUID();
  const now = Date.now();
  createSession.run(id, platform, chat, now, now, now);
  return id;
});

function resolveChat(platform, chat) {
  const known = find.get(platform, chat);
  if (known) return known;
  return getOnWriter.get(createOwn.immediate(platform, chat));
}

const app = Fastify({ logger: false });
app.post("/v1/messages", async (request) => {
  const { platform, chat, content, clientId } = request.body;
  const session = resolveChat(platform, chat);
  const turnId = randomUUID();
  const message = await append({
    sessionId: session.id,
    role: "user",
    content,
    clientId: clientId ?? null,
    turnId,
  });
  const reply = await append({
    sessionId: session.id,
    role: "assistant",
    content: `echo: ${content}`,
    clientId: null,
    turnId,
  });
  return { profile: "default", session: getSession.get(session.id), message, reply };
});
// The gateway's metrics route, for commitBatches() (bench/lib/gateway-servers.mjs).
app.get("/metrics", async () =>
  [
    `hearth_commit_batch_size_sum{profile="default"} ${batched}`,
    `hearth_commit_batch_size_count{profile="default"} ${batches}`,
    "",
  ].join("\n"),
);
const address = await app.listen({ host: "127.0.0.1", port: 0 });

emit({ listening: true, address });
serve({
  async close() {
    await app.close();
    writer.close();
    reader.close();
  },
});
