/**
 * Real-looking Hermes Agent history for the import tests, written through
 * HermesWriter (hermes-fixture.ts) into a store of any handled version.
 */
import type Database from "better-sqlite3";
import { createHermesDb, type HermesMessageInput, HermesWriter } from "./hermes-fixture.js";

/** What fillHermes wrote, for the assertions. */
export interface HermesContent {
  sessions: number;
  /** Messages with a role hearth stores. */
  messages: number;
  /** Of those, archived at the source (schema 24 on). */
  archived: number;
}

/**
 * Real-looking history: a CLI session with tool calls, reasoning and
 * unicode; a Telegram conversation split by compaction (parent and child);
 * an empty session; a rewind and an in-place compaction (schema 24 on);
 * pinned, archived and hidden sessions (26, 28 on); a bookkeeping row of a
 * role hearth has no home for; rows in tables hearth has no home for.
 */
export function fillHermes(db: Database.Database, version: number): HermesContent {
  const w = new HermesWriter(db);
  const t0 = 1_767_000_000.25;
  let messages = 0;
  let archived = 0;
  const add = (sid: string, m: HermesMessageInput) => {
    w.message(sid, m);
    if (["system", "user", "assistant", "tool"].includes(m.role)) {
      messages++;
      if (m.active === false) archived++;
    }
  };
  db.transaction(() => {
    w.session({
      id: "20260101_090000_a1b2c3",
      startedAt: t0,
      title: "Fix the Docker build 🐳",
      userId: "basic:alice",
      systemPrompt: "You are Hermes. ".repeat(40),
    });
    const s1 = "20260101_090000_a1b2c3";
    add(s1, {
      role: "user",
      content: "The build fails: `COPY failed` — why? 日本語もOK، والعربية",
      at: t0 + 1,
      tokens: 21,
    });
    add(s1, {
      role: "assistant",
      content: null,
      at: t0 + 2,
      toolCalls: [
        {
          id: "call_1",
          type: "function",
          function: { name: "terminal", arguments: '{"cmd":"docker build ."}' },
        },
      ],
      reasoning: "Let me look at the build output first.",
      tokens: 48,
      finishReason: "tool_calls",
    });
    add(s1, {
      role: "tool",
      content: "Step 4/9 : COPY app/ /srv\nCOPY failed: no source files",
      at: t0 + 3,
      toolCallId: "call_1",
      toolName: "terminal",
    });
    add(s1, {
      role: "assistant",
      content: "The `app/` directory is in .dockerignore. Remove that line. ✅",
      at: t0 + 4,
      tokens: 30,
      finishReason: "stop",
    });
    add(s1, { role: "session_meta", content: '{"kind":"resume"}', at: t0 + 5 });

    const parent = "20260102_100000_tg0001";
    const child = "20260102_113000_tg0002";
    w.session({
      id: parent,
      source: "telegram",
      startedAt: t0 + 86_400,
      endedAt: t0 + 86_400 + 5400,
      endReason: "compression",
      chatId: "555001",
      title: "Trip plans",
    });
    for (let i = 0; i < 6; i++)
      add(parent, {
        role: i % 2 ? "assistant" : "user",
        content: `message ${i} about the trip to Kyōto`,
        at: t0 + 86_400 + i * 60,
      });
    w.session({
      id: child,
      source: "telegram",
      startedAt: t0 + 86_400 + 5400,
      parent,
      chatId: "555001",
    });
    add(child, {
      role: "user",
      content: "[CONTEXT SUMMARY] We planned a trip to Kyōto.",
      at: t0 + 86_400 + 5400,
    });
    add(child, { role: "assistant", content: "Shall I book the ryokan?", at: t0 + 86_400 + 5460 });

    w.session({
      id: "20260103_080000_empty0",
      startedAt: t0 + 2 * 86_400,
      endedAt: t0 + 2 * 86_400 + 10,
      endReason: "user_exit",
    });

    if (version >= 24) {
      const s4 = "20260104_120000_rewind";
      w.session({ id: s4, source: "discord", startedAt: t0 + 3 * 86_400, chatId: "chan-9" });
      add(s4, {
        role: "user",
        content: "first question",
        at: t0 + 3 * 86_400 + 1,
        active: false,
        compacted: true,
      });
      add(s4, {
        role: "assistant",
        content: "first answer",
        at: t0 + 3 * 86_400 + 2,
        active: false,
        compacted: true,
      });
      add(s4, {
        role: "user",
        content: "Summary: a first question was answered.",
        at: t0 + 3 * 86_400 + 3,
      });
      add(s4, {
        role: "user",
        content: "a question taken back",
        at: t0 + 3 * 86_400 + 4,
        active: false,
      });
      add(s4, { role: "user", content: "the question asked instead", at: t0 + 3 * 86_400 + 5 });
    }
    if (version >= 26) {
      w.session({
        id: "20260105_070000_pinned",
        startedAt: t0 + 4 * 86_400,
        title: "Pinned notes",
        flags: { pinned: true },
      });
      add("20260105_070000_pinned", {
        role: "user",
        content: "remember: the deploy key rotates monthly",
        at: t0 + 4 * 86_400 + 1,
      });
      w.session({
        id: "20260105_080000_archiv",
        startedAt: t0 + 4 * 86_400 + 60,
        title: "Old thread",
        flags: { archived: true },
      });
      add("20260105_080000_archiv", {
        role: "user",
        content: "an old thread",
        at: t0 + 4 * 86_400 + 61,
      });
    }
    if (version >= 28) {
      w.session({
        id: "20260105_090000_hidden",
        source: "subagent",
        startedAt: t0 + 4 * 86_400 + 120,
        flags: { hidden: true },
      });
      add("20260105_090000_hidden", {
        role: "user",
        content: "a subagent's task",
        at: t0 + 4 * 86_400 + 121,
      });
    }
    db.prepare("INSERT INTO state_meta (key, value) VALUES ('fts_storage_version', '3')").run();
    if (version >= 18)
      db.prepare(
        "INSERT INTO gateway_routing (session_key, entry_json, updated_at) VALUES (?, ?, ?)",
      ).run("agent:main:telegram:dm:555001", "{}", t0);
    if (version >= 20)
      db.prepare(
        "INSERT INTO session_model_usage (session_id, model, input_tokens) VALUES (?, ?, ?)",
      ).run(s1, "anthropic/claude-sonnet-4.6", 1200);
  })();
  const sessions = Number(
    (db.prepare("SELECT count(*) AS n FROM sessions").get() as { n: number }).n,
  );
  return { sessions, messages, archived };
}

/** Add `sessions` sessions of `perSession` plain messages each (bulk history for batches and kills). */
export function fillBulk(
  db: Database.Database,
  sessions: number,
  perSession: number,
  from = 0,
): number {
  const w = new HermesWriter(db);
  const t0 = 1_768_000_000;
  db.transaction(() => {
    for (let s = from; s < from + sessions; s++) {
      const id = `bulk_${String(s).padStart(5, "0")}`;
      w.session({ id, source: "cli", startedAt: t0 + s * 100 });
      for (let i = 0; i < perSession; i++)
        w.message(id, {
          role: i % 2 ? "assistant" : "user",
          content: `bulk ${s}.${i} — ünïcödé`,
          at: t0 + s * 100 + i,
          tokens: 7,
        });
    }
  })();
  return sessions * perSession;
}

/** A finished fixture file: version, content, WAL checkpointed and the file closed (as a stopped Hermes leaves it). */
export function writeHermesDb(path: string, version: number): HermesContent {
  const db = createHermesDb(path, version);
  try {
    return fillHermes(db, version);
  } finally {
    db.close();
  }
}
