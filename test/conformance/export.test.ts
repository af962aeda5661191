import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ExportFormat, Message, Session, Store } from "../../src/index.js";
import { backends, drain, expectHearthError, TestHomes } from "./fixture.js";

describe.each(backends)("export on $name", (backend) => {
  type Line = { type: "session"; session: Session } | { type: "message"; message: Message };

  const homes = new TestHomes(backend);
  let store: Store;
  let first: Session;
  let second: Session;

  function parseJsonl(chunks: string[]): Line[] {
    const text = chunks.join("");
    expect(text.endsWith("\n")).toBe(true);
    return text
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as Line);
  }

  beforeEach(async () => {
    store = await homes.open(homes.makeHome());
    first = await store.sessions.create({ title: "First chat" });
    second = await store.sessions.create({ title: "Second chat" });
    await store.messages.appendBatch(first.id, [
      { role: "user", content: "hello one" },
      { role: "assistant", content: { text: "structured reply" } },
      { role: "user", content: "rewound question" },
    ]);
    await store.messages.rewind(first.id, 1);
    await store.messages.append(first.id, { role: "user", content: "better question" });
    await store.messages.appendBatch(second.id, [
      { role: "user", content: "hello two" },
      { role: "assistant", content: "reply two" },
    ]);
  });

  afterEach(async () => {
    await homes.cleanup();
  });

  describe("store.export jsonl", () => {
    it("writes each session line followed by its messages in ordinal order, history included", async () => {
      const lines = parseJsonl(
        await drain(store.export({ format: "jsonl", sessionIds: [first.id, second.id] })),
      );
      expect(
        lines.map((l) =>
          l.type === "session"
            ? `S:${l.session.id}`
            : `M:${l.message.sessionId}:${l.message.ordinal}`,
        ),
      ).toEqual([
        `S:${first.id}`,
        `M:${first.id}:0`,
        `M:${first.id}:1`,
        `M:${first.id}:2`,
        `M:${first.id}:3`,
        `S:${second.id}`,
        `M:${second.id}:0`,
        `M:${second.id}:1`,
      ]);
      const session = lines[0] as Extract<Line, { type: "session" }>;
      expect(session.session).toEqual(await store.sessions.require(first.id));
      const messages = lines
        .filter((l): l is Extract<Line, { type: "message" }> => l.type === "message")
        .map((l) => l.message);
      const stored = [
        ...(await store.messages.load(first.id, { includeHistory: true })),
        ...(await store.messages.load(second.id, { includeHistory: true })),
      ];
      expect(messages).toEqual(stored);
      expect(messages[1]!.content).toEqual({ text: "structured reply" });
      expect(messages[2]).toMatchObject({ active: false, archivedReason: "rewind" });
    });

    it("leaves history out with includeHistory: false", async () => {
      const lines = parseJsonl(
        await drain(
          store.export({ format: "jsonl", sessionIds: [first.id], includeHistory: false }),
        ),
      );
      const messages = lines.flatMap((l) => (l.type === "message" ? [l.message] : []));
      expect(messages.map((m) => m.ordinal)).toEqual([0, 1, 3]);
      expect(messages.every((m) => m.active)).toBe(true);
    });

    it("exports every session, archived and hidden included, when no ids are given", async () => {
      await store.sessions.setArchived(second.id, true);
      const hidden = await store.sessions.create();
      await store.sessions.setHidden(hidden.id, true);
      const lines = parseJsonl(await drain(store.export({ format: "jsonl" })));
      const sessions = lines.flatMap((l) => (l.type === "session" ? [l.session.id] : []));
      expect(new Set(sessions)).toEqual(new Set([first.id, second.id, hidden.id]));
      expect(lines.filter((l) => l.type === "message")).toHaveLength(6);
    });

    it("pages a 1,200-message session into several chunks and includes every message", async () => {
      const big = await store.sessions.create({ title: "Big" });
      await store.messages.appendBatch(
        big.id,
        Array.from({ length: 1200 }, (_, i) => ({ role: "user" as const, content: `line ${i}` })),
      );
      await store.messages.rewind(big.id, 899); // 300 become history; still exported
      const chunks = await drain(store.export({ format: "jsonl", sessionIds: [big.id] }));
      expect(chunks.length).toBeGreaterThan(2);
      const lines = parseJsonl(chunks);
      expect(lines[0]).toMatchObject({ type: "session" });
      const ordinals = lines.flatMap((l) => (l.type === "message" ? [l.message.ordinal] : []));
      expect(ordinals).toEqual(Array.from({ length: 1200 }, (_, i) => i));

      const live = parseJsonl(
        await drain(store.export({ format: "jsonl", sessionIds: [big.id], includeHistory: false })),
      );
      expect(live.filter((l) => l.type === "message")).toHaveLength(900);

      const markdown = (
        await drain(store.export({ format: "markdown", sessionIds: [big.id] }))
      ).join("");
      expect(markdown.match(/^## \d+\. user/gm)).toHaveLength(1200);
      expect(markdown).toContain("line 1199");
    });
  });

  describe("store.export markdown", () => {
    it("contains the title and every message", async () => {
      const text = (
        await drain(store.export({ format: "markdown", sessionIds: [first.id, second.id] }))
      ).join("");
      expect(text).toContain("# First chat");
      expect(text).toContain("# Second chat");
      for (const content of [
        "hello one",
        "rewound question",
        "better question",
        "hello two",
        "reply two",
      ]) {
        expect(text).toContain(content);
      }
      expect(text).toContain('"text": "structured reply"');
      expect(text).toMatch(/## 2\. user _\(rewind\)_/);
      expect(text.indexOf("# First chat")).toBeLessThan(text.indexOf("# Second chat"));
      expect(text.indexOf("hello one")).toBeLessThan(text.indexOf("better question"));
    });

    it("renders tool calls (name, id, arguments) and marks tool results with their call id", async () => {
      const s = await store.sessions.create({ title: "Tools" });
      await store.messages.append(s.id, {
        role: "assistant",
        content: null,
        toolCalls: [
          {
            id: "call_7",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Lisbon"}' },
          },
        ],
      });
      await store.messages.append(s.id, { role: "tool", content: "22 C", toolCallId: "call_7" });
      const text = (await drain(store.export({ format: "markdown", sessionIds: [s.id] }))).join("");
      expect(text).toContain("**tool call** `get_weather` (id `call_7`)");
      expect(text).toContain('"city": "Lisbon"');
      expect(text).toContain("_result of tool call `call_7`_\n\n22 C");
      expect(text).not.toMatch(/## 0\. assistant\n\n\n/);
    });

    it("escapes control characters and bidi overrides in Markdown; JSONL stays exact", async () => {
      // PostgreSQL text cannot hold NUL (refused on write): only SQLite stores one.
      const nul = backend.name === "sqlite" ? "\u0000" : "";
      const raw = `a\u001b]0;pwned\u0007b${nul}c\u202ed\re\r\nf\tg\nh`;
      const s = await store.sessions.create({ title: "t\u001b[2Jx" });
      await store.messages.append(s.id, { role: "user", content: raw });
      const md = (await drain(store.export({ format: "markdown", sessionIds: [s.id] }))).join("");
      expect(md).toContain("# t\\x1b[2Jx");
      expect(md).toContain(`a\\x1b]0;pwned\\x07b${nul ? "\\x00" : ""}c\\u202ed\\x0de\nf\tg\nh`);
      expect([...md].filter((c) => /\p{Cc}/u.test(c) && c !== "\n" && c !== "\t")).toEqual([]);
      expect(md).not.toContain("\u202e");
      const jsonl = parseJsonl(await drain(store.export({ format: "jsonl", sessionIds: [s.id] })));
      const line = jsonl.find((l) => l.type === "message");
      expect(line?.type === "message" && line.message.content).toBe(raw);
    });

    it("names an untitled session by its id, and leaves history out on request", async () => {
      const untitled = await store.sessions.create();
      await store.messages.append(untitled.id, { role: "user", content: "anonymous" });
      const text = (
        await drain(
          store.export({
            format: "markdown",
            sessionIds: [untitled.id, first.id],
            includeHistory: false,
          }),
        )
      ).join("");
      expect(text).toContain(`# Session ${untitled.id}`);
      expect(text).toContain("anonymous");
      expect(text).not.toContain("rewound question");
    });
  });

  describe("store.export errors", () => {
    it("an unknown session id is HEARTH_SESSION_NOT_FOUND", async () => {
      await expectHearthError(
        drain(store.export({ format: "jsonl", sessionIds: ["no-such-session"] })),
        "HEARTH_SESSION_NOT_FOUND",
      );
    });

    it("a bad format is a RangeError", async () => {
      await expect(drain(store.export({ format: "xml" as ExportFormat }))).rejects.toThrow(
        RangeError,
      );
    });
  });
});
