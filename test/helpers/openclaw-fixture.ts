/**
 * OpenClaw state dirs for the import tests, written here from the layout
 * OpenClaw documents (its session-management reference): per agent,
 * `agents/<agent>/sessions/sessions.json` (session key -> entry) and one
 * JSONL transcript per session, a `session` header line then entries with
 * `id` and `parentId` (a tree), `message` entries holding `{ role, content
 * blocks }`, and `compaction` entries naming their first kept entry.
 */
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const T = Date.parse("2026-03-01T09:00:00.000Z");
const iso = (s: number) => new Date(T + s * 1000).toISOString();

type Line = Record<string, unknown> | string;

function msg(
  id: string,
  parentId: string | null,
  s: number,
  message: Record<string, unknown>,
): Line {
  return {
    type: "message",
    id,
    parentId,
    timestamp: iso(s),
    message: { timestamp: T + s * 1000, ...message },
  };
}
const user = (text: string) => ({ role: "user", content: [{ type: "text", text }] });
const assistant = (text: string) => ({
  role: "assistant",
  content: [{ type: "text", text }],
  usage: { input: 40, output: 12, totalTokens: 52 },
  stopReason: "stop",
});

export interface OpenClawContent {
  dir: string;
  sessionsDir: string;
  sessions: number;
  messages: number;
  archived: number;
  /** The line of the broken JSON line in the Telegram transcript. */
  brokenLine: number;
}

const jsonl = (lines: Line[]) =>
  lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n");

function write(file: string, lines: Line[]): void {
  writeFileSync(file, `${jsonl(lines)}\n`);
}

/** A state dir with one agent (main): four sessions, one of them no longer in sessions.json. */
export function writeOpenClawDir(dir: string): OpenClawContent {
  const sessionsDir = join(dir, "agents", "main", "sessions");
  mkdirSync(sessionsDir, { recursive: true });
  const tg = "6f1c2d3e-0001-4a5b-8c9d-aaaaaaaaaaaa";
  const main = "6f1c2d3e-0002-4a5b-8c9d-bbbbbbbbbbbb";
  const compacted = "6f1c2d3e-0003-4a5b-8c9d-cccccccccccc";
  const old = "6f1c2d3e-0004-4a5b-8c9d-dddddddddddd";
  writeFileSync(
    join(sessionsDir, "sessions.json"),
    JSON.stringify({
      "agent:main:telegram:dm:555001": {
        sessionId: tg,
        updatedAt: T + 99_000,
        chatType: "direct",
        displayName: "Ana (Telegram)",
      },
      "agent:main:main": { sessionId: main, updatedAt: T + 50_000 },
      "agent:main:discord:channel:42": {
        sessionId: compacted,
        updatedAt: T + 70_000,
        chatType: "room",
      },
    }),
  );
  // A tool round, thinking, an image block, an extension's entry, and one broken line.
  write(join(sessionsDir, `${tg}.jsonl`), [
    {
      type: "session",
      version: 3,
      id: tg,
      timestamp: iso(0),
      cwd: "/home/ana/.openclaw/workspace",
    },
    {
      type: "model_change",
      id: "m0",
      parentId: null,
      timestamp: iso(0),
      provider: "anthropic",
      modelId: "claude-sonnet-4-5",
    },
    msg("a1", "m0", 1, {
      role: "user",
      content: [
        { type: "text", text: "¿Qué hay en /srv? 日本語" },
        { type: "image", data: "AAAA", mimeType: "image/png" },
      ],
    }),
    msg("a2", "a1", 2, {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "List the directory first." },
        { type: "toolCall", id: "call-1", name: "bash", arguments: { command: "ls /srv" } },
      ],
      usage: { input: 120, output: 30 },
      stopReason: "toolUse",
      model: "claude-sonnet-4-5",
    }),
    "{this line was cut by a crash",
    msg("a3", "a2", 3, {
      role: "toolResult",
      toolCallId: "call-1",
      toolName: "bash",
      content: [{ type: "text", text: "app\ndata" }],
      isError: false,
    }),
    {
      type: "custom",
      id: "x1",
      parentId: "a3",
      timestamp: iso(3),
      customType: "memory-flush",
      data: {},
    },
    msg("a4", "x1", 4, assistant("Two directories: app and data. ✅")),
  ]);
  // A tree: c1..c2 then a rewind back to b2 and another answer.
  write(join(sessionsDir, `${main}.jsonl`), [
    { type: "session", version: 3, id: main, timestamp: iso(10) },
    msg("b1", null, 11, user("first question")),
    msg("b2", "b1", 12, assistant("first answer")),
    msg("c1", "b2", 13, user("a question taken back")),
    msg("c2", "c1", 14, assistant("an answer to it")),
    msg("d1", "b2", 15, user("the question asked instead")),
    msg("d2", "d1", 16, assistant("the answer that counts")),
  ]);
  // A compaction: e1, e2 summarised, e3 on kept.
  write(join(sessionsDir, `${compacted}.jsonl`), [
    { type: "session", version: 3, id: compacted, timestamp: iso(20) },
    msg("e1", null, 21, user("old planning")),
    msg("e2", "e1", 22, assistant("old plan")),
    msg("e3", "e2", 23, user("kept context")),
    {
      type: "compaction",
      id: "k1",
      parentId: "e3",
      timestamp: iso(24),
      summary: "We planned the trip to Kyōto.",
      firstKeptEntryId: "e3",
      tokensBefore: 9000,
    },
    msg("e4", "k1", 25, user("book the ryokan")),
  ]);
  // An earlier session of a key, reset since: in no entry of sessions.json.
  write(join(sessionsDir, `${old}.jsonl`), [
    { type: "session", version: 3, id: old, timestamp: iso(-86_400) },
    msg("o1", null, -86_399, user("an older conversation")),
  ]);
  // Stored messages: tg 4 (a1..a4), main 6 (2 rewound), compacted 5 (e1, e2 compacted; k1 as a summary), old 1.
  return { dir, sessionsDir, sessions: 4, messages: 16, archived: 4, brokenLine: 5 };
}

/** Append lines to a transcript, as the OpenClaw gateway does while it runs. */
export function appendTranscript(file: string, lines: Line[], endWithNewline = true): void {
  appendFileSync(file, `${jsonl(lines)}${endWithNewline ? "\n" : ""}`);
}

export { msg as openClawMessage, user as openClawUser };
