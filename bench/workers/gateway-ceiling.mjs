// The gateway's own HTTP ceiling (workloads 3 and 8): the gateway's server
// (buildServer from dist/gateway/server.js, the same routes, validation,
// runTurn, echo responder and metrics) with the store replaced by a no-op.
// A stub store answers resolveChat with one cached session object per chat,
// messages.load with the chat's last user message (so the echo reply is the
// same size as the real one) and sessions.get with the session; a stub
// committer answers append at once with a Message-shaped object. Listens on
// 127.0.0.1, port 0; prints {"listening":true,"address"}, then {"ready":true}
// (bench/lib/procs.mjs serve), and runs until {"op":"exit"} or stdin closes.
import { configSchema } from "../../dist/config/schema.js";
import { GatewayMetrics } from "../../dist/gateway/metrics.js";
import { buildServer } from "../../dist/gateway/server.js";
import { setProcessKind } from "../../dist/process/kind.js";
import { EchoResponder } from "../../dist/turn/responder.js";
import { emit, serve } from "../lib/procs.mjs";

setProcessKind("gateway");
const config = configSchema().parse({ gateway: { host: "127.0.0.1", port: 0 } });
const profile = "default";
const sessions = new Map(); // "platform\0chat" → Session
const byId = new Map(); // id → Session
const lastUser = new Map(); // session id → Message
let nextId = 1;

const store = {
  path: ":no-op:",
  sessions: {
    async resolveChat(platform, chat) {
      const key = `${platform}\0${chat}`;
      let session = sessions.get(key);
      if (!session) {
        const now = Date.now();
        session = {
          id: `00000000-0000-4000-8000-${String(sessions.size).padStart(12, "0")}`,
          profile,
          source: platform,
          chatKey: chat,
          title: null,
          titleSource: null,
          createdAt: now,
          updatedAt: now,
          lastActivityAt: now,
          endedAt: null,
          endReason: null,
          parentId: null,
          pinned: false,
          archived: false,
          hidden: false,
          handoff: null,
          messageCount: 0,
          tokenCount: 0,
        };
        sessions.set(key, session);
        byId.set(session.id, session);
      }
      return session;
    },
    async get(id) {
      return byId.get(id) ?? null;
    },
  },
  messages: {
    async load(sessionId) {
      const last = lastUser.get(sessionId);
      return last ? [last] : [];
    },
  },
};

const committer = {
  async append(sessionId, message) {
    const m = {
      id: nextId++,
      sessionId,
      ordinal: nextId,
      role: message.role,
      content: message.content,
      name: message.name ?? null,
      toolCalls: null,
      toolCallId: null,
      tokensIn: null,
      tokensOut: null,
      createdAt: Date.now(),
      active: true,
      archivedReason: null,
      clientId: message.clientId ?? null,
    };
    if (m.role === "user") lastUser.set(sessionId, m);
    return m;
  },
  // What runTurn calls since the group commit may answer with the session (GroupCommitter).
  async appendReporting(sessionId, message) {
    return { message: await this.append(sessionId, message) };
  },
  async drain() {},
};

const shutdown = new AbortController();
const app = buildServer(
  {
    runtimes: new Map([[profile, { profile, store, committer }]]),
    config: () => config,
    responder: () => new EchoResponder(),
    metrics: new GatewayMetrics(),
    shutdown: shutdown.signal,
  },
  // As the daemon: pino at info on stderr (no line per request).
  { level: "info", stream: process.stderr },
);
// The daemon's one extra hook (connection: close while stopping).
let stopping = false;
app.addHook("onSend", async (_request, reply) => {
  if (stopping) void reply.header("connection", "close");
});
const address = await app.listen({ host: config.gateway.host, port: config.gateway.port });

emit({ listening: true, address });
serve({
  async close() {
    stopping = true;
    shutdown.abort();
    await app.close();
  },
});
