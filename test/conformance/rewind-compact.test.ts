import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NewMessage, Session, Store } from "../../src/index.js";
import { backends, expectHearthError, TestHomes } from "./fixture.js";

describe.each(backends)("rewind-compact on $name", (backend) => {
  const homes = new TestHomes(backend);
  let store: Store;
  let session: Session;

  const turns = (n: number, prefix = "m"): NewMessage[] =>
    Array.from({ length: n }, (_, i) => ({
      role: i % 2 === 0 ? ("user" as const) : ("assistant" as const),
      content: `${prefix}${i}`,
    }));

  beforeEach(async () => {
    store = await homes.open(homes.makeHome());
    session = await store.sessions.create();
  });

  afterEach(async () => {
    await homes.cleanup();
  });

  async function messageCount(): Promise<number> {
    return (await store.sessions.require(session.id)).messageCount;
  }

  describe("messages.rewind", () => {
    it("archives every message after the ordinal as rewind history", async () => {
      await store.messages.appendBatch(session.id, turns(6));
      expect(await store.messages.rewind(session.id, 2)).toBe(3);

      const live = await store.messages.load(session.id);
      expect(live.map((m) => m.ordinal)).toEqual([0, 1, 2]);
      expect(live.every((m) => m.active && m.archivedReason === null)).toBe(true);

      const all = await store.messages.load(session.id, { includeHistory: true });
      expect(all.map((m) => [m.ordinal, m.active, m.archivedReason])).toEqual([
        [0, true, null],
        [1, true, null],
        [2, true, null],
        [3, false, "rewind"],
        [4, false, "rewind"],
        [5, false, "rewind"],
      ]);
      expect(await messageCount()).toBe(3);
      expect(await store.counts()).toMatchObject({ activeMessages: 3, archivedMessages: 3 });
    });

    it("new appends continue with fresh ordinals and never reuse an archived one", async () => {
      await store.messages.appendBatch(session.id, turns(5));
      await store.messages.rewind(session.id, 1);
      const next = await store.messages.append(session.id, { role: "user", content: "retry" });
      expect(next.ordinal).toBe(5);
      const batch = await store.messages.appendBatch(session.id, turns(2, "b"));
      expect(batch.map((m) => m.ordinal)).toEqual([6, 7]);

      expect((await store.messages.load(session.id)).map((m) => m.ordinal)).toEqual([
        0, 1, 5, 6, 7,
      ]);
      const all = await store.messages.load(session.id, { includeHistory: true });
      const ordinals = all.map((m) => m.ordinal);
      expect(new Set(ordinals).size).toBe(ordinals.length);
      expect(ordinals).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(await messageCount()).toBe(5);
    });

    it("-1 archives the whole live transcript", async () => {
      await store.messages.appendBatch(session.id, turns(3));
      expect(await store.messages.rewind(session.id, -1)).toBe(3);
      expect(await store.messages.load(session.id)).toEqual([]);
      expect(await store.messages.load(session.id, { includeHistory: true })).toHaveLength(3);
      expect(await messageCount()).toBe(0);
    });

    it("to the last live ordinal archives nothing", async () => {
      await store.messages.appendBatch(session.id, turns(3));
      expect(await store.messages.rewind(session.id, 2)).toBe(0);
      expect(await messageCount()).toBe(3);
    });

    it("to an ordinal that is not live is HEARTH_ORDINAL_OUT_OF_RANGE and changes nothing", async () => {
      await store.messages.appendBatch(session.id, turns(6));
      await store.messages.rewind(session.id, 3);
      const before = await store.messages.load(session.id, { includeHistory: true });

      // Archived (rewound) ordinal.
      await expectHearthError(store.messages.rewind(session.id, 4), "HEARTH_ORDINAL_OUT_OF_RANGE");
      // Never assigned.
      await expectHearthError(store.messages.rewind(session.id, 99), "HEARTH_ORDINAL_OUT_OF_RANGE");
      expect(await store.messages.load(session.id, { includeHistory: true })).toEqual(before);
      expect(await messageCount()).toBe(4);
    });

    it("rejects a malformed ordinal with a RangeError", async () => {
      await store.messages.appendBatch(session.id, turns(2));
      await expect(store.messages.rewind(session.id, -2)).rejects.toThrow(RangeError);
      await expect(store.messages.rewind(session.id, 0.5)).rejects.toThrow(RangeError);
    });

    it("of an unknown session is HEARTH_SESSION_NOT_FOUND", async () => {
      await expectHearthError(store.messages.rewind("nope", -1), "HEARTH_SESSION_NOT_FOUND");
    });
  });

  describe("messages.compact", () => {
    it("replaces the live transcript with one summary and keeps the rest as compaction history", async () => {
      await store.messages.appendBatch(session.id, turns(4));
      await store.messages.rewind(session.id, 2); // ordinal 3 becomes rewind history
      const { summary, archived } = await store.messages.compact(session.id, {
        content: "The user asked about m0..m2.",
        tokensOut: 12,
      });
      expect(archived).toBe(3);
      expect(summary).toMatchObject({
        role: "system",
        name: "summary",
        content: "The user asked about m0..m2.",
        ordinal: 4,
        active: true,
        tokensOut: 12,
      });

      expect(await store.messages.load(session.id)).toEqual([summary]);
      const all = await store.messages.load(session.id, { includeHistory: true });
      expect(all.map((m) => [m.ordinal, m.active, m.archivedReason])).toEqual([
        [0, false, "compaction"],
        [1, false, "compaction"],
        [2, false, "compaction"],
        [3, false, "rewind"],
        [4, true, null],
      ]);
      expect(await messageCount()).toBe(1);
      expect(await store.counts()).toMatchObject({
        messages: 5,
        activeMessages: 1,
        archivedMessages: 4,
      });
    });

    it("compacting twice archives the first summary too, and the transcript goes on after it", async () => {
      await store.messages.appendBatch(session.id, turns(3));
      const first = await store.messages.compact(session.id, { content: "first summary" });
      await store.messages.appendBatch(session.id, turns(2, "after"));
      expect(await messageCount()).toBe(3);
      const second = await store.messages.compact(session.id, { content: "second summary" });
      expect(second.archived).toBe(3);
      expect(second.summary.ordinal).toBe(6);
      const live = await store.messages.load(session.id);
      expect(live.map((m) => m.content)).toEqual(["second summary"]);
      const history = await store.messages.load(session.id, { includeHistory: true });
      expect(history.find((m) => m.id === first.summary.id)).toMatchObject({
        active: false,
        archivedReason: "compaction",
      });
      expect(await messageCount()).toBe(1);
    });

    it("of an unknown session is HEARTH_SESSION_NOT_FOUND and writes nothing", async () => {
      await expectHearthError(
        store.messages.compact("nope", { content: "s" }),
        "HEARTH_SESSION_NOT_FOUND",
      );
      expect((await store.counts()).messages).toBe(0);
    });
  });

  describe("session.messageCount", () => {
    it("tracks live messages through append, rewind, compact and idempotent retries", async () => {
      expect(await messageCount()).toBe(0);
      await store.messages.append(session.id, { role: "user", content: "a", clientId: "c1" });
      await store.messages.append(session.id, { role: "user", content: "a", clientId: "c1" });
      expect(await messageCount()).toBe(1);
      await store.messages.appendBatch(session.id, turns(4));
      expect(await messageCount()).toBe(5);
      await store.messages.rewind(session.id, 2);
      expect(await messageCount()).toBe(3);
      await store.messages.compact(session.id, { content: "sum" });
      expect(await messageCount()).toBe(1);
      const live = await store.messages.load(session.id);
      expect(live).toHaveLength(await messageCount());
    });
  });
});
