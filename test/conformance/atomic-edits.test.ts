import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NewMessage, Session, Store } from "../../src/index.js";
import { backends, expectHearthError, TestHomes } from "./fixture.js";

describe.each(backends)("atomic-edits on $name", (backend) => {
  const homes = new TestHomes(backend);
  let store: Store;
  let session: Session;

  const turns = (n: number, prefix = "m"): NewMessage[] =>
    Array.from({ length: n }, (_, i) => ({ role: "user" as const, content: `${prefix}${i}` }));

  beforeEach(async () => {
    store = await homes.open(homes.makeHome());
    session = await store.sessions.create();
  });

  afterEach(async () => {
    await homes.cleanup();
  });

  const live = async () => (await store.messages.load(session.id)).map((m) => m.content);
  const history = async () =>
    (await store.messages.load(session.id, { includeHistory: true })).map((m) => [
      m.content,
      m.active,
    ]);

  describe("messages.pop", () => {
    it("archives the last live message only and returns it as archived", async () => {
      await store.messages.appendBatch(session.id, turns(3));
      const popped = await store.messages.pop(session.id);
      expect(popped).toMatchObject({
        content: "m2",
        ordinal: 2,
        active: false,
        archivedReason: "rewind",
      });
      expect(await live()).toEqual(["m0", "m1"]);
      expect(await history()).toEqual([
        ["m0", true],
        ["m1", true],
        ["m2", false],
      ]);
      expect((await store.sessions.require(session.id)).messageCount).toBe(2);
    });

    it("returns null on an empty live transcript, and -1 is the expectation for it", async () => {
      expect(await store.messages.pop(session.id)).toBeNull();
      expect(await store.messages.pop(session.id, { expectLastOrdinal: -1 })).toBeNull();
      await store.messages.append(session.id, { role: "user", content: "x" });
      await expectHearthError(
        store.messages.pop(session.id, { expectLastOrdinal: -1 }),
        "HEARTH_CONFLICT",
      );
    });

    it("with a stale expectLastOrdinal refuses with HEARTH_CONFLICT and changes nothing", async () => {
      await store.messages.appendBatch(session.id, turns(3));
      const err = await expectHearthError(
        store.messages.pop(session.id, { expectLastOrdinal: 1 }),
        "HEARTH_CONFLICT",
      );
      expect(err.details).toMatchObject({ expectedLastOrdinal: 1, lastOrdinal: 2 });
      expect(await live()).toEqual(["m0", "m1", "m2"]);
      const popped = await store.messages.pop(session.id, { expectLastOrdinal: 2 });
      expect(popped?.content).toBe("m2");
    });

    it("rejects a bad expectation before any transaction", async () => {
      await expect(store.messages.pop(session.id, { expectLastOrdinal: 1.5 })).rejects.toThrow(
        TypeError,
      );
      await expectHearthError(store.messages.pop("nope"), "HEARTH_SESSION_NOT_FOUND");
    });
  });

  describe("messages.archiveAfter", () => {
    it("archives the suffix when the last ordinal is as expected, else HEARTH_CONFLICT", async () => {
      await store.messages.appendBatch(session.id, turns(5));
      await expectHearthError(
        store.messages.archiveAfter(session.id, 1, { expectLastOrdinal: 3 }),
        "HEARTH_CONFLICT",
      );
      expect(await live()).toHaveLength(5);
      expect(await store.messages.archiveAfter(session.id, 1, { expectLastOrdinal: 4 })).toBe(3);
      expect(await live()).toEqual(["m0", "m1"]);
      await expectHearthError(
        store.messages.archiveAfter(session.id, 3, { expectLastOrdinal: 1 }),
        "HEARTH_ORDINAL_OUT_OF_RANGE",
      );
      // expectLastOrdinal is required: without it, this would be rewind().
      await expect(
        store.messages.archiveAfter(session.id, 0, {} as { expectLastOrdinal: number }),
      ).rejects.toThrow(TypeError);
    });
  });

  describe("messages.replaceSuffix", () => {
    it("archives the suffix and appends the replacement in one transaction", async () => {
      await store.messages.appendBatch(session.id, turns(4));
      const result = await store.messages.replaceSuffix(session.id, 1, turns(2, "r"), {
        expectLastOrdinal: 3,
      });
      expect(result.archived).toBe(2);
      expect(result.replayed).toBe(false);
      expect(result.messages.map((m) => [m.content, m.ordinal])).toEqual([
        ["r0", 4],
        ["r1", 5],
      ]);
      expect(await live()).toEqual(["m0", "m1", "r0", "r1"]);
      expect(await history()).toHaveLength(6);
    });

    it("changes nothing on a conflict, on bad input, or when an insert fails", async () => {
      await store.messages.appendBatch(session.id, turns(3));
      await expectHearthError(
        store.messages.replaceSuffix(session.id, 0, turns(1, "r"), { expectLastOrdinal: 1 }),
        "HEARTH_CONFLICT",
      );
      await expect(
        store.messages.replaceSuffix(session.id, 0, [{ role: "bogus" } as unknown as NewMessage], {
          expectLastOrdinal: 2,
        }),
      ).rejects.toThrow(TypeError);
      // A clientId already used with other content fails the whole edit: the archive rolls back.
      await store.messages.append(session.id, { role: "user", content: "kept", clientId: "c1" });
      await expectHearthError(
        store.messages.replaceSuffix(
          session.id,
          0,
          [{ role: "user", content: "other", clientId: "c1" }],
          { expectLastOrdinal: 3 },
        ),
        "HEARTH_IDEMPOTENCY_CONFLICT",
      );
      expect(await live()).toEqual(["m0", "m1", "m2", "kept"]);
    });

    it("with an idempotencyKey, a replay returns the first result and edits nothing", async () => {
      await store.messages.appendBatch(session.id, turns(3));
      const options = { expectLastOrdinal: 2, idempotencyKey: "retry-turn-7" };
      const first = await store.messages.replaceSuffix(session.id, 0, turns(1, "r"), options);
      // The ack was lost; the caller retries with what it saw before: same answer, no second edit.
      const again = await store.messages.replaceSuffix(session.id, 0, turns(1, "r"), options);
      expect(again.replayed).toBe(true);
      expect(again.archived).toBe(first.archived);
      expect(again.messages.map((m) => m.id)).toEqual(first.messages.map((m) => m.id));
      expect(await live()).toEqual(["m0", "r0"]);
      expect(await history()).toHaveLength(4);
      // The same key for another request is refused.
      await expectHearthError(
        store.messages.replaceSuffix(session.id, 0, turns(1, "other"), options),
        "HEARTH_IDEMPOTENCY_CONFLICT",
      );
    });
  });

  describe("clientId semantics", () => {
    it("a rewound clientId returns the archived message: a late retry never resurrects it", async () => {
      const first = await store.messages.append(session.id, {
        role: "user",
        content: "hi",
        clientId: "k",
      });
      await store.messages.rewind(session.id, -1);
      const retry = await store.messages.append(session.id, {
        role: "user",
        content: "hi",
        clientId: "k",
      });
      expect(retry).toMatchObject({ id: first.id, active: false, archivedReason: "rewind" });
      expect(await live()).toEqual([]);
    });

    it("content null is an assistant message that only calls tools, and round-trips", async () => {
      const toolCalls = [
        { id: "call_1", type: "function", function: { name: "f", arguments: "{}" } },
      ];
      const m = await store.messages.append(session.id, {
        role: "assistant",
        content: null,
        toolCalls,
      });
      const [loaded] = await store.messages.load(session.id);
      expect(loaded).toMatchObject({ id: m.id, content: null, toolCalls });
      await expect(
        store.messages.append(session.id, { role: "user", content: null }),
      ).rejects.toThrow(TypeError);
      await expect(
        store.messages.append(session.id, { role: "assistant", content: null }),
      ).rejects.toThrow(TypeError);
    });
  });
});
