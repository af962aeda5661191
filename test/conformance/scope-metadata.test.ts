import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_METADATA_BYTES, type Store } from "../../src/index.js";
import { isSqliteStore } from "../../src/store/api.js";
import { internals } from "../../src/store/sqlite/store.js";
import { backends, expectHearthError, TestHomes } from "./fixture.js";

describe.each(backends)("scope-metadata on $name", (backend) => {
  const homes = new TestHomes(backend);
  let store: Store;

  beforeEach(async () => {
    store = await homes.open(homes.makeHome());
  });

  afterEach(async () => {
    await homes.cleanup();
  });

  describe("session ids and parents", () => {
    it("a taken id is HEARTH_SESSION_EXISTS, an unknown parent HEARTH_UNKNOWN_PARENT; neither writes", async () => {
      await store.sessions.create({ id: "s1", title: "first" });
      await expectHearthError(store.sessions.create({ id: "s1" }), "HEARTH_SESSION_EXISTS");
      await expectHearthError(
        store.sessions.create({ id: "s2", parentId: "missing" }),
        "HEARTH_UNKNOWN_PARENT",
      );
      expect(await store.sessions.get("s2")).toBeNull();
      const child = await store.sessions.create({ id: "s3", parentId: "s1" });
      expect(child.parentId).toBe("s1");
    });

    it("getOrCreate returns the stored session as it is, or creates it once", async () => {
      const made = await store.sessions.getOrCreate("thread-1", {
        source: "agents",
        ownerId: "u1",
      });
      expect(made).toMatchObject({ id: "thread-1", source: "agents", ownerId: "u1" });
      const again = await store.sessions.getOrCreate("thread-1", { source: "other" });
      expect(again).toEqual(made);
      // Concurrent first calls share one session.
      const racing = await Promise.all(
        Array.from({ length: 5 }, () => store.sessions.getOrCreate("thread-2")),
      );
      expect(new Set(racing.map((s) => s.createdAt)).size).toBe(1);
      expect((await store.counts()).sessions).toBe(2);
    });
  });

  describe("metadata", () => {
    it("sessions and messages carry a JSON object that round-trips", async () => {
      const meta = { agent: "planner", tags: ["a", "b"], depth: { n: 1, ok: true, none: null } };
      const s = await store.sessions.create({ metadata: meta });
      expect(s.metadata).toEqual(meta);
      expect((await store.sessions.require(s.id)).metadata).toEqual(meta);
      const updated = await store.sessions.setMetadata(s.id, { v: 2 });
      expect(updated.metadata).toEqual({ v: 2 });
      expect((await store.sessions.setMetadata(s.id, null)).metadata).toBeNull();

      const m = await store.messages.append(s.id, {
        role: "user",
        content: "hi",
        metadata: { traceId: "t-1" },
      });
      expect(m.metadata).toEqual({ traceId: "t-1" });
      expect((await store.messages.load(s.id))[0]!.metadata).toEqual({ traceId: "t-1" });
    });

    it("refuses what is not a plain JSON object, too deep or too large, and writes nothing", async () => {
      const bad: unknown[] = [
        "text",
        [1, 2],
        { when: new Date() },
        { n: Number.NaN },
        { f: () => 1 },
        { big: 10n },
        JSON.parse(`${'{"a":'.repeat(20)}1${"}".repeat(20)}`),
      ];
      for (const metadata of bad) {
        await expect(
          store.sessions.create({ metadata: metadata as Record<string, never> }),
        ).rejects.toThrow(/metadata/);
      }
      await expect(
        store.sessions.create({ metadata: { x: "y".repeat(MAX_METADATA_BYTES) } }),
      ).rejects.toThrow(RangeError);
      const s = await store.sessions.create();
      await expect(
        store.messages.append(s.id, {
          role: "user",
          content: "x",
          metadata: [] as unknown as Record<string, never>,
        }),
      ).rejects.toThrow(TypeError);
      expect((await store.counts()).sessions).toBe(1);
      expect((await store.counts()).messages).toBe(0);
    });
  });

  describe("owner scope", () => {
    it("list() filters on the owner through its index", async () => {
      await store.sessions.create({ ownerId: "alice", title: "a1" });
      await store.sessions.create({ ownerId: "alice", title: "a2" });
      const b = await store.sessions.create({ ownerId: "bob", title: "b1" });
      await store.sessions.create({ title: "nobody" });
      const alice = await store.sessions.list({ ownerId: "alice" });
      expect(alice.items.map((s) => s.title).sort()).toEqual(["a1", "a2"]);
      expect((await store.sessions.list({ ownerId: "bob" })).items.map((s) => s.id)).toEqual([
        b.id,
      ]);
      await store.sessions.setOwner(b.id, "alice");
      expect((await store.sessions.list({ ownerId: "alice" })).items).toHaveLength(3);

      if (!isSqliteStore(store)) return; // the query plan below is SQLite's
      const plan = store[internals]
        .connection("reader")
        .db.prepare(
          "EXPLAIN QUERY PLAN SELECT * FROM sessions WHERE archived = 0 AND hidden = 0 AND owner_id = ? ORDER BY last_activity_at DESC, id DESC LIMIT 51",
        )
        .all("alice") as { detail: string }[];
      expect(plan.map((p) => p.detail).join(" ")).toContain("sessions_by_owner");
    });
  });

  describe("search filters", () => {
    it("narrows hits by source, chat, owner and date", async () => {
      const web = await store.sessions.create({ source: "web", chatKey: "c1", ownerId: "alice" });
      const tg = await store.sessions.create({ source: "telegram", chatKey: "c2", ownerId: "bob" });
      const old = await store.messages.append(web.id, {
        role: "user",
        content: "deploy the rocket",
        createdAt: 1_000,
      });
      const fresh = await store.messages.append(tg.id, {
        role: "user",
        content: "deploy the rocket again",
        createdAt: 2_000,
      });
      const ids = async (o: Parameters<Store["search"]>[1]) =>
        (await store.search("rocket", o)).map((h) => h.messageId).sort();
      expect(await ids({})).toEqual([old.id, fresh.id].sort());
      expect(await ids({ source: "web" })).toEqual([old.id]);
      expect(await ids({ chatKey: "c2" })).toEqual([fresh.id]);
      expect(await ids({ ownerId: "bob" })).toEqual([fresh.id]);
      expect(await ids({ ownerId: "carol" })).toEqual([]);
      expect(await ids({ since: 1_500 })).toEqual([fresh.id]);
      expect(await ids({ until: 1_500 })).toEqual([old.id]);
      expect(await ids({ source: "web", since: 1_500 })).toEqual([]);
      await expect(store.search("rocket", { since: -1 })).rejects.toThrow(RangeError);
    });
  });
});
