import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { MessageRole, NewMessage, Session, Store } from "../../src/index.js";
import { isSqliteStore } from "../../src/store/api.js";
import { isFreshInsert } from "../../src/store/message-write.js";
import { internals } from "../../src/store/sqlite/store.js";
import { backends, expectHearthError, TestHomes } from "./fixture.js";

describe.each(backends)("messages on $name", (backend) => {
  const homes = new TestHomes(backend);
  let store: Store;
  let session: Session;

  beforeEach(async () => {
    store = await homes.open(homes.makeHome());
    session = await store.sessions.create({ title: "Chat" });
  });

  afterEach(async () => {
    await homes.cleanup();
  });

  describe("messages.append", () => {
    it("assigns ordinals 0..n in order and keeps the session's counters", async () => {
      const roles: MessageRole[] = ["system", "user", "assistant", "tool", "user"];
      const appended = [];
      for (const [i, role] of roles.entries()) {
        appended.push(
          await store.messages.append(session.id, {
            role,
            content: `m${i}`,
            tokensIn: 1,
            tokensOut: 2,
          }),
        );
      }
      expect(appended.map((m) => m.ordinal)).toEqual([0, 1, 2, 3, 4]);
      expect(new Set(appended.map((m) => m.id)).size).toBe(5);
      const loaded = await store.messages.load(session.id);
      expect(loaded).toEqual(appended);
      const after = await store.sessions.require(session.id);
      expect(after.messageCount).toBe(5);
      expect(after.tokenCount).toBe(15);
    });

    it("round-trips string content as a string and object content as an object", async () => {
      const text = await store.messages.append(session.id, { role: "user", content: '{"a":1}' });
      const object = await store.messages.append(session.id, {
        role: "assistant",
        content: { parts: [{ type: "text", text: "hi" }], n: 2 },
      });
      const array = await store.messages.append(session.id, {
        role: "assistant",
        content: [1, "two", { three: 3 }],
      });
      const [t, o, a] = await store.messages.load(session.id);
      expect(t!.id).toBe(text.id);
      expect(t!.content).toBe('{"a":1}');
      expect(typeof t!.content).toBe("string");
      expect(o!.id).toBe(object.id);
      expect(o!.content).toEqual({ parts: [{ type: "text", text: "hi" }], n: 2 });
      expect(a!.id).toBe(array.id);
      expect(a!.content).toEqual([1, "two", { three: 3 }]);
    });

    it("round-trips tool calls, tool call id, name and token counts", async () => {
      const toolCalls = [
        {
          id: "call_1",
          type: "function",
          function: { name: "weather", arguments: '{"city":"Oslo"}' },
        },
      ];
      await store.messages.append(session.id, { role: "assistant", content: "", toolCalls });
      await store.messages.append(session.id, {
        role: "tool",
        content: "sunny",
        name: "weather",
        toolCallId: "call_1",
        tokensIn: 7,
        tokensOut: 0,
      });
      const [call, result] = await store.messages.load(session.id);
      expect(call!.toolCalls).toEqual(toolCalls);
      expect(call!.toolCallId).toBeNull();
      expect(result).toMatchObject({
        role: "tool",
        content: "sunny",
        name: "weather",
        toolCallId: "call_1",
        toolCalls: null,
        tokensIn: 7,
        tokensOut: 0,
        active: true,
        archivedReason: null,
      });
    });

    it("is idempotent on clientId: the same clientId twice stores one row and returns its id", async () => {
      const first = await store.messages.append(session.id, {
        role: "user",
        content: "hello",
        clientId: "client-1",
      });
      const again = await store.messages.append(session.id, {
        role: "user",
        content: "hello",
        clientId: "client-1",
      });
      // The same clientId with other content is refused, not silently ignored.
      await expectHearthError(
        store.messages.append(session.id, {
          role: "user",
          content: "hello (edited)",
          clientId: "client-1",
        }),
        "HEARTH_IDEMPOTENCY_CONFLICT",
      );
      expect(again.id).toBe(first.id);
      expect(again.ordinal).toBe(first.ordinal);
      expect(again.content).toBe("hello");
      expect((await store.counts()).messages).toBe(1);
      expect((await store.sessions.require(session.id)).messageCount).toBe(1);
      // The same clientId in another session is another message.
      const other = await store.sessions.create();
      const elsewhere = await store.messages.append(other.id, {
        role: "user",
        content: "hello",
        clientId: "client-1",
      });
      expect(elsewhere.id).not.toBe(first.id);
      expect((await store.counts()).messages).toBe(2);
      // Only a fresh insert is marked fresh (a turn then skips looking for the
      // replay's answer); a replay and a loaded copy are not.
      expect([first, again, elsewhere].map(isFreshInsert)).toEqual([true, false, true]);
      const [loaded] = await store.messages.load(session.id);
      expect(isFreshInsert(loaded!)).toBe(false);
    });

    it("rejects an invalid role with a TypeError and writes nothing", async () => {
      await expect(
        store.messages.append(session.id, { role: "robot" as MessageRole, content: "x" }),
      ).rejects.toThrow(TypeError);
      await expect(
        store.messages.append(session.id, { role: "user", content: 42 as unknown as string }),
      ).rejects.toThrow(TypeError);
      await expect(
        store.messages.append(session.id, { role: "user", content: "x", tokensOut: -3 }),
      ).rejects.toThrow(RangeError);
      expect((await store.counts()).messages).toBe(0);
      expect((await store.sessions.require(session.id)).messageCount).toBe(0);
      // The failed attempts consumed no ordinal.
      expect(
        (await store.messages.append(session.id, { role: "user", content: "ok" })).ordinal,
      ).toBe(0);
    });

    it("to an unknown session is HEARTH_SESSION_NOT_FOUND", async () => {
      await expectHearthError(
        store.messages.append("nope", { role: "user", content: "x" }),
        "HEARTH_SESSION_NOT_FOUND",
      );
      expect((await store.counts()).messages).toBe(0);
    });
  });

  describe("messages.appendBatch is atomic (D4)", () => {
    const three = (): NewMessage[] => [
      { role: "user", content: "one" },
      { role: "assistant", content: "two" },
      { role: "user", content: "three" },
    ];

    async function seed(): Promise<void> {
      await store.messages.appendBatch(session.id, three());
    }

    async function expectUnchanged(): Promise<void> {
      expect(await store.counts()).toEqual({
        sessions: 1,
        messages: 3,
        activeMessages: 3,
        archivedMessages: 0,
      });
      const s = await store.sessions.require(session.id);
      expect(s.messageCount).toBe(3);
      expect(s.tokenCount).toBe(0);
      expect((await store.messages.load(session.id)).map((m) => m.content)).toEqual([
        "one",
        "two",
        "three",
      ]);
      // No ordinal was consumed by the failed batch.
      const next = await store.messages.append(session.id, { role: "user", content: "next" });
      expect(next.ordinal).toBe(3);
    }

    it("stores every message of a good batch with consecutive ordinals", async () => {
      const stored = await store.messages.appendBatch(session.id, three());
      expect(stored.map((m) => m.ordinal)).toEqual([0, 1, 2]);
      expect(await store.messages.load(session.id)).toEqual(stored);
    });

    it("writes nothing when the third message has an invalid role", async () => {
      await seed();
      const batch = [
        { role: "user", content: "a", tokensIn: 5 },
        { role: "assistant", content: "b", tokensOut: 5 },
        { role: "narrator" as MessageRole, content: "c" },
      ] satisfies NewMessage[];
      await expect(store.messages.appendBatch(session.id, batch)).rejects.toThrow(TypeError);
      await expectUnchanged();
    });

    it("writes nothing when one message has tokensIn -1", async () => {
      await seed();
      const batch: NewMessage[] = [
        { role: "user", content: "a" },
        { role: "assistant", content: "b", tokensIn: -1 },
      ];
      await expect(store.messages.appendBatch(session.id, batch)).rejects.toThrow(RangeError);
      await expectUnchanged();
    });

    it("writes nothing when the session does not exist (or was deleted)", async () => {
      await seed();
      const doomed = await store.sessions.create();
      await store.sessions.delete(doomed.id);
      await expectHearthError(
        store.messages.appendBatch(doomed.id, three()),
        "HEARTH_SESSION_NOT_FOUND",
      );
      await expectHearthError(
        store.messages.appendBatch("never-was", three()),
        "HEARTH_SESSION_NOT_FOUND",
      );
      await expectUnchanged();
    });

    it("rolls back rows already inserted when the database refuses a later message inside the transaction", async () => {
      await seed();
      // Real fault injection inside the database: a trigger aborts the INSERT of the
      // third message after the first two rows and their counter updates were written.
      const undo = await backend.refuseContent(store, "boom");
      try {
        const batch: NewMessage[] = [
          { role: "user", content: "a", tokensIn: 5 },
          { role: "assistant", content: "b", tokensOut: 5, clientId: "batch-b" },
          { role: "tool", content: "boom" },
        ];
        const err = await expectHearthError(
          store.messages.appendBatch(session.id, batch),
          backend.dbErrorCode,
        );
        expect(err.message).toContain("boom refused");
        if (isSqliteStore(store))
          expect(store[internals].connection("writer").db.inTransaction).toBe(false);
      } finally {
        await undo();
      }
      await expectUnchanged();
      // The clientId of the rolled-back message is free again: appending it stores a new row.
      const b = await store.messages.append(session.id, {
        role: "assistant",
        content: "b",
        clientId: "batch-b",
      });
      expect(b.ordinal).toBe(4);
      expect((await store.counts()).messages).toBe(5);
    });

    it("rolls back when a JavaScript caller's bad value fails SQLite's STRICT typing mid-batch", async () => {
      await seed();
      // createdAt 1.5 cannot be stored in a STRICT INTEGER column: the third
      // message fails inside the transaction (or earlier, if validation is added).
      const batch: NewMessage[] = [
        { role: "user", content: "a", tokensIn: 5 },
        { role: "assistant", content: "b", tokensOut: 5 },
        { role: "user", content: "c", createdAt: 1.5 },
      ];
      await expect(store.messages.appendBatch(session.id, batch)).rejects.toThrow();
      await expectUnchanged();
    });

    it("an empty batch stores nothing", async () => {
      expect(await store.messages.appendBatch(session.id, [])).toEqual([]);
      expect((await store.counts()).messages).toBe(0);
    });

    it("a clientId repeated inside one batch is stored once", async () => {
      const stored = await store.messages.appendBatch(session.id, [
        { role: "user", content: "x", clientId: "dup" },
        { role: "user", content: "x", clientId: "dup" },
      ]);
      expect(stored[0]!.id).toBe(stored[1]!.id);
      expect((await store.counts()).messages).toBe(1);
    });
  });

  describe("messages.load", () => {
    it("shows the live transcript, and with includeHistory the archived messages too", async () => {
      await store.messages.appendBatch(session.id, [
        { role: "user", content: "q1" },
        { role: "assistant", content: "a1" },
        { role: "user", content: "q2" },
        { role: "assistant", content: "a2" },
      ]);
      await store.messages.rewind(session.id, 1);
      const live = await store.messages.load(session.id);
      expect(live.map((m) => m.content)).toEqual(["q1", "a1"]);
      expect(live.every((m) => m.active)).toBe(true);
      const all = await store.messages.load(session.id, { includeHistory: true });
      expect(all.map((m) => [m.ordinal, m.content, m.active])).toEqual([
        [0, "q1", true],
        [1, "a1", true],
        [2, "q2", false],
        [3, "a2", false],
      ]);
      expect(await store.messages.load(session.id, { includeHistory: false })).toEqual(live);
    });

    it("of an existing session without messages is empty", async () => {
      expect(await store.messages.load(session.id)).toEqual([]);
      expect(await store.messages.load(session.id, { includeHistory: true })).toEqual([]);
    });

    it("of an unknown session is HEARTH_SESSION_NOT_FOUND", async () => {
      await expectHearthError(store.messages.load("nope"), "HEARTH_SESSION_NOT_FOUND");
      await expectHearthError(
        store.messages.load("nope", { includeHistory: true }),
        "HEARTH_SESSION_NOT_FOUND",
      );
    });
  });
});
