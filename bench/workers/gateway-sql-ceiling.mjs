// The gateway's fair ceiling (workloads 3 and 8): a minimal server on the
// same HTTP framework (fastify, the gateway's own copy) doing a turn's SQL
// work with raw better-sqlite3, and nothing else. argv[2] is JSON:
// { path, synchronous, writerThread }: a store hearth created (its schema,
// FTS5 triggers included), opened with hearth's writer pragmas (WAL, the
// level given).
//
// { writerThread: true }: the writer connection runs in a worker thread
// (gateway-sql-writer.mjs), the event loop keeps HTTP and the reads: the
// prototype of issue 15's "writer in a worker thread", measured, not shipped.
//
// POST /v1/messages {platform, chat, content, clientId} does what a gateway
// turn with the echo responder does to the store (src/turn/run.ts,
// src/turn/group-commit.ts, src/store/sqlite/messages.ts appendMany, sessions.ts):
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
// Group commit as the gateway's (src/turn/group-commit.ts): what arrives
// within a tick (setImmediate) or while a commit runs is one BEGIN
// IMMEDIATE … COMMIT, and every caller is answered only after it. No
// validation schema, auth, hooks, metrics, lock or generation check: that
// is the gateway's own cost, which this ceiling measures.
// Prints {"listening":true,"address"}, then {"ready":true}; runs until
// {"op":"exit"} or stdin closes.
import { randomUUID } from "node:crypto";
import { Worker } from "node:worker_threads";
import Database from "better-sqlite3";
import Fastify from "fastify";
import { emit, serve } from "../lib/procs.mjs";
import { openWriter } from "./gateway-sql-writer.mjs";

const { path, synchronous, writerThread = false } = JSON.parse(process.argv[2]);
const reader = new Database(path, { readonly: true, fileMustExist: true });
reader.pragma("busy_timeout = 5000");
const find =
  reader.prepare(`SELECT * FROM sessions WHERE source = ? AND chat_key = ? AND ended_at IS NULL
  ORDER BY created_at DESC LIMIT 1`);
const getSession = reader.prepare("SELECT * FROM sessions WHERE id = ?");

/** The writer: on this loop, or in a worker thread behind messages. */
function startWriter() {
  if (!writerThread) {
    const w = openWriter(path, synchronous);
    return {
      commitBatch: async (items, now) => w.commitBatch(items, now),
      createSession: async (platform, chat) => w.createSession(platform, chat),
      close: async () => w.close(),
    };
  }
  const worker = new Worker(new URL("./gateway-sql-writer.mjs", import.meta.url), {
    workerData: { role: "gateway-sql-writer", path, synchronous },
  });
  const waiting = new Map();
  let next = 0;
  worker.on("message", ({ id, ok, value, error }) => {
    const w = waiting.get(id);
    waiting.delete(id);
    if (ok) w.resolve(value);
    else w.reject(new Error(error));
  });
  const call = (op, args) =>
    new Promise((resolve, reject) => {
      const id = next++;
      waiting.set(id, { resolve, reject });
      worker.postMessage({ id, op, args });
    });
  return {
    commitBatch: (items, now) => call("commitBatch", [items, now]),
    createSession: (platform, chat) => call("createSession", [platform, chat]),
    close: () => worker.terminate(),
  };
}
const writer = startWriter();

let queue = [];
let scheduled = false;
let flushing = false;
let batches = 0;
let batched = 0;
/** Sessions created, each in a commit of its own (an fsync inside it at FULL). */
let created = 0;
/** Messages acknowledged (answered after their commit). */
let acked = 0;

async function flush() {
  scheduled = false;
  if (flushing || queue.length === 0) return;
  flushing = true;
  const batch = queue;
  queue = [];
  let results;
  try {
    const items = batch.map(({ sessionId, role, content, clientId, turnId }) => ({
      sessionId,
      role,
      content,
      clientId,
      turnId,
    }));
    results = await writer.commitBatch(items, Date.now());
  } catch (err) {
    results = batch.map(() => ({ ok: false, error: String(err?.message ?? err) }));
  }
  batches++;
  batched += batch.length;
  results.forEach((r, i) => {
    if (r.ok) batch[i].resolve(r.message);
    else batch[i].reject(new Error(r.error));
  });
  flushing = false;
  // Whatever arrived during this commit goes in the next one, at once.
  if (queue.length > 0) void flush();
}

function append(item) {
  return new Promise((resolve, reject) => {
    queue.push({ ...item, resolve, reject });
    if (!scheduled && !flushing) {
      scheduled = true;
      setImmediate(flush);
    }
  });
}

async function resolveChat(platform, chat) {
  const known = find.get(platform, chat);
  if (known) return known;
  const session = await writer.createSession(platform, chat);
  created++;
  return session;
}

const app = Fastify({ logger: false });
app.post("/v1/messages", async (request) => {
  const { platform, chat, content, clientId } = request.body;
  const session = await resolveChat(platform, chat);
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
  acked += 2;
  return { profile: "default", session: getSession.get(session.id), message, reply };
});
// The gateway's metrics route, for commitBatches() (bench/lib/gateway-servers.mjs).
// WAL fsyncs counted as hearth counts them (hearth_wal_fsyncs_total: every
// write-path commit's, checkpoints' own syncs not): one inside each commit
// at FULL, the group commits and the new sessions' transactions (issue 44;
// until 2026-12-06 only the group commits were counted here).
app.get("/metrics", async () =>
  [
    `hearth_commit_batch_size_sum{profile="default"} ${batched}`,
    `hearth_commit_batch_size_count{profile="default"} ${batches}`,
    ...(synchronous === "full"
      ? [`hearth_wal_fsyncs_total{profile="default"} ${batches + created}`]
      : []),
    `hearth_messages_acknowledged_total{profile="default",role="any"} ${acked}`,
    "",
  ].join("\n"),
);
const address = await app.listen({ host: "127.0.0.1", port: 0 });

emit({ listening: true, address });
serve({
  async close() {
    await app.close();
    await writer.close();
    reader.close();
  },
});
