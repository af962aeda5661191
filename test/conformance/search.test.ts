import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Session, Store } from "../../src/index.js";
import { backends, TestHomes } from "./fixture.js";

describe.each(backends)("search on $name", (backend) => {
  const homes = new TestHomes(backend);
  let store: Store;
  let trip: Session;
  let cooking: Session;

  /** A fresh home and store: two sessions, five messages. */
  async function fill(): Promise<void> {
    store = await homes.open(homes.makeHome());
    trip = await store.sessions.create({ title: "Trip" });
    cooking = await store.sessions.create({ title: "Cooking" });
    await store.messages.appendBatch(trip.id, [
      { role: "user", content: "Plan a trip to Lisbon in spring" },
      { role: "assistant", content: "Lisbon is lovely in April; pack a light jacket." },
      { role: "user", content: "What about Porto instead?" },
    ]);
    await store.messages.appendBatch(cooking.id, [
      { role: "user", content: "A recipe for bacalhau, the Lisbon classic" },
      { role: "assistant", content: { text: "Soak the cod overnight", tags: ["cod"] } },
    ]);
  }

  describe("store.search", () => {
    describe("each test on a fresh store", () => {
      beforeEach(fill);
      afterEach(() => homes.cleanup());

      it("finds live messages and brackets the match in the snippet", async () => {
        const hits = await store.search("porto");
        expect(hits).toHaveLength(1);
        const [hit] = hits;
        expect(hit).toMatchObject({
          sessionId: trip.id,
          ordinal: 2,
          role: "user",
          active: true,
        });
        expect(hit!.snippet).toContain("[Porto]");
        // The hit carries its session as it is now: title and source.
        expect(hit!.session).toMatchObject({ title: "Trip", source: "cli" });
        const loaded = await store.messages.load(trip.id);
        expect(hit!.messageId).toBe(loaded[2]!.id);
        expect(hit!.createdAt).toBe(loaded[2]!.createdAt);
      });

      it("wraps matches in the marks asked for, so brackets in the text stay apart (issue 47)", async () => {
        await store.messages.append(trip.id, {
          role: "user",
          content: "todo [ ] [x] pack, see [Faro]",
        });
        const [hit] = await store.search("faro", { marks: ["\uE000", "\uE001"] });
        expect(hit!.snippet).toContain("[ ] [x] pack, see [\uE000Faro\uE001");
        expect((await store.search("faro"))[0]!.snippet).toContain("see [[Faro]");
        await expect(store.search("faro", { marks: ["", "]"] })).rejects.toThrow(RangeError);
      });

      it("finds every message with the word, across sessions", async () => {
        const hits = await store.search("Lisbon");
        expect(hits).toHaveLength(3);
        expect(new Set(hits.map((h) => h.sessionId))).toEqual(new Set([trip.id, cooking.id]));
        for (const hit of hits) expect(hit.snippet).toContain("[Lisbon]");
      });

      it("searches JSON content as text", async () => {
        const hits = await store.search("overnight");
        expect(hits.map((h) => [h.sessionId, h.ordinal])).toEqual([[cooking.id, 1]]);
      });

      it("filters by sessionId", async () => {
        const hits = await store.search("lisbon", { sessionId: cooking.id });
        expect(hits.map((h) => [h.sessionId, h.ordinal])).toEqual([[cooking.id, 0]]);
        expect(await store.search("lisbon", { sessionId: "no-such-session" })).toEqual([]);
      });

      it("leaves rewound messages out by default and finds them with includeHistory", async () => {
        await store.messages.rewind(trip.id, 1); // "What about Porto instead?" becomes history
        expect(await store.search("porto")).toEqual([]);
        const history = await store.search("porto", { includeHistory: true });
        expect(history).toHaveLength(1);
        expect(history[0]).toMatchObject({ sessionId: trip.id, ordinal: 2, active: false });
        expect(history[0]!.snippet).toContain("[Porto]");
      });

      it("finds compacted history only with includeHistory", async () => {
        await store.messages.compact(cooking.id, { content: "Talked about a fish recipe." });
        expect(await store.search("bacalhau")).toEqual([]);
        expect(await store.search("bacalhau", { includeHistory: true })).toHaveLength(1);
        expect((await store.search("fish"))[0]).toMatchObject({
          sessionId: cooking.id,
          active: true,
        });
      });

      it("respects limit", async () => {
        expect(await store.search("lisbon", { limit: 2 })).toHaveLength(2);
      });

      it("matches a quoted phrase as a phrase", async () => {
        expect(await store.search('"light jacket"')).toHaveLength(1);
        expect(await store.search('"jacket light"')).toEqual([]);
      });

      it("treats operators as plain words", async () => {
        // AND/NOT are searched literally, so no message contains all the words.
        expect(await store.search("lisbon NOT porto")).toEqual([]);
        // Special characters around a word do not stop it from matching.
        expect(await store.search("(porto)*")).toHaveLength(1);
        expect(await store.search("content:porto")).toEqual([]);
        expect((await store.counts()).messages).toBe(5);
      });
    });

    // Searches only (no write): one store serves them all, as a fresh one per test did (on
    // PostgreSQL each fresh store cost a recycled database emptied and filled again).
    describe("text it cannot search as given, on one store", () => {
      beforeAll(fill);
      afterAll(() => homes.cleanup());

      it.each([
        '"',
        '"unbalanced',
        'say "hi',
        "lisbon AND",
        "OR lisbon",
        "NOT lisbon",
        "lisbon NOT porto",
        "(lisbon",
        "lisbon)",
        "((a OR b) AND c",
        "*",
        "lis*",
        "**",
        ":",
        "content:lisbon",
        "lisbon:",
        "NEAR(lisbon porto, 2)",
        "^lisbon",
        "-lisbon",
        "+",
        "'single quotes'",
        "a''b",
        "\\",
        "{content}: lisbon",
        "lisbon; DROP TABLE messages; --",
        "\u0000",
        "café ☕ 東京",
      ])("never throws on user text %j", async (text) => {
        const hits = await store.search(text);
        expect(Array.isArray(hits)).toBe(true);
        for (const hit of hits) expect(typeof hit.snippet).toBe("string");
      });

      it.each(["", " ", "   \t\n ", "***", "()", '""'])("returns [] for %j", async (text) => {
        expect(await store.search(text)).toEqual([]);
      });

      it.each([
        0,
        -1,
        501,
        2.5,
        Number.NaN,
      ])("rejects limit %s with a RangeError", async (limit) => {
        await expect(store.search("lisbon", { limit })).rejects.toThrow(RangeError);
      });

      it("rejects non-string text with a TypeError", async () => {
        await expect(store.search(42 as unknown as string)).rejects.toThrow(TypeError);
      });
    });
  });
});
