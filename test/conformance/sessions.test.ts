import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Session, Store } from "../../src/index.js";
import { backends, expectHearthError, TestHomes, tick } from "./fixture.js";

describe.each(backends)("sessions on $name", (backend) => {
  const homes = new TestHomes(backend);
  let store: Store;

  beforeEach(async () => {
    store = await homes.open(homes.makeHome());
  });

  afterEach(async () => {
    await homes.cleanup();
  });

  describe("sessions.create", () => {
    it("applies the defaults: source cli, no title, nothing ended, pinned or archived", async () => {
      const session = await store.sessions.create();
      expect(session.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(session.source).toBe("cli");
      expect(session.profile).toBe("default");
      expect(session.title).toBeNull();
      expect(session.titleSource).toBeNull();
      expect(session.chatKey).toBeNull();
      expect(session.parentId).toBeNull();
      expect(session.endedAt).toBeNull();
      expect(session.pinned).toBe(false);
      expect(session.archived).toBe(false);
      expect(session.hidden).toBe(false);
      expect(session.handoff).toBeNull();
      expect(session.messageCount).toBe(0);
      expect(session.tokenCount).toBe(0);
      expect(session.lastActivityAt).toBe(session.createdAt);
    });

    it('records a given title as a "user" title unless told otherwise', async () => {
      const user = await store.sessions.create({ title: "Plans" });
      expect(user.title).toBe("Plans");
      expect(user.titleSource).toBe("user");
      const auto = await store.sessions.create({ title: "Summary of chat", titleSource: "auto" });
      expect(auto.titleSource).toBe("auto");
    });

    it("keeps the given id, source, chat key and parent", async () => {
      const parent = await store.sessions.create({ id: "parent-1" });
      const child = await store.sessions.create({
        id: "child-1",
        source: "telegram",
        chatKey: "chat-42",
        parentId: parent.id,
      });
      expect(child).toMatchObject({
        id: "child-1",
        source: "telegram",
        chatKey: "chat-42",
        parentId: "parent-1",
      });
    });

    it("refuses a user title another visible session holds, and stores nothing", async () => {
      await store.sessions.create({ title: "Plans" });
      await expectHearthError(store.sessions.create({ title: "  Plans " }), "HEARTH_TITLE_TAKEN");
      expect((await store.counts()).sessions).toBe(1);
    });
  });

  describe("sessions.get / require", () => {
    it("get returns the stored session, or null for an unknown id", async () => {
      const created = await store.sessions.create({ title: "Hello" });
      expect(await store.sessions.get(created.id)).toEqual(created);
      expect(await store.sessions.get("no-such-session")).toBeNull();
    });

    it("require throws HEARTH_SESSION_NOT_FOUND for an unknown id", async () => {
      const created = await store.sessions.create();
      expect(await store.sessions.require(created.id)).toEqual(created);
      const err = await expectHearthError(
        store.sessions.require("no-such-session"),
        "HEARTH_SESSION_NOT_FOUND",
      );
      expect(err.resource).toBe("no-such-session");
    });
  });

  describe("sessions.list", () => {
    async function walk(options: { limit: number }): Promise<{ items: Session[]; pages: number }> {
      const items: Session[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = await store.sessions.list({ ...options, cursor });
        expect(page.items.length).toBeLessThanOrEqual(options.limit);
        items.push(...page.items);
        cursor = page.nextCursor;
        pages++;
        expect(pages).toBeLessThan(100);
      } while (cursor !== null);
      return { items, pages };
    }

    it("pages with limit + nextCursor through every session exactly once, newest activity first", async () => {
      const created: Session[] = [];
      for (let i = 0; i < 25; i++) created.push(await store.sessions.create({ title: `s${i}` }));
      // Bring three old sessions to the top, one after another, in this order.
      const touched = [created[3]!, created[11]!, created[7]!];
      for (const session of touched) {
        await tick();
        await store.messages.append(session.id, { role: "user", content: "ping" });
      }

      const { items, pages } = await walk({ limit: 4 });
      expect(pages).toBe(7);
      expect(items).toHaveLength(25);
      expect(new Set(items.map((s) => s.id)).size).toBe(25);
      expect(new Set(items.map((s) => s.id))).toEqual(new Set(created.map((s) => s.id)));

      // Most recently active first, in reverse order of the appends.
      expect(items.slice(0, 3).map((s) => s.id)).toEqual(touched.map((s) => s.id).reverse());
      // The whole walk is ordered by (lastActivityAt, id) descending.
      for (let i = 1; i < items.length; i++) {
        const a = items[i - 1]!;
        const b = items[i]!;
        expect(
          a.lastActivityAt > b.lastActivityAt ||
            (a.lastActivityAt === b.lastActivityAt && a.id > b.id),
        ).toBe(true);
      }
      // The same listing in one page agrees with the walk.
      const whole = await store.sessions.list({ limit: 500 });
      expect(whole.nextCursor).toBeNull();
      expect(whole.items.map((s) => s.id)).toEqual(items.map((s) => s.id));
    });

    it("returns no cursor when the last page is exactly full", async () => {
      for (let i = 0; i < 4; i++) await store.sessions.create();
      const first = await store.sessions.list({ limit: 2 });
      expect(first.nextCursor).not.toBeNull();
      const second = await store.sessions.list({ limit: 2, cursor: first.nextCursor });
      expect(second.items).toHaveLength(2);
      expect(second.nextCursor).toBeNull();
    });

    it("filters by source, chat key, ended, pinned and archived", async () => {
      const cli = await store.sessions.create({ source: "cli" });
      const tg1 = await store.sessions.create({ source: "telegram", chatKey: "chat-1" });
      const tg2 = await store.sessions.create({ source: "telegram", chatKey: "chat-2" });
      const ended = await store.sessions.create({ source: "http" });
      await store.sessions.end(ended.id, "idle");
      const pinned = await store.sessions.create({ source: "http" });
      await store.sessions.setPinned(pinned.id, true);
      const archived = await store.sessions.create({ source: "cli" });
      await store.sessions.setArchived(archived.id, true);

      const ids = async (options: Parameters<Store["sessions"]["list"]>[0]) =>
        new Set((await store.sessions.list(options)).items.map((s) => s.id));

      expect(await ids({ source: "telegram" })).toEqual(new Set([tg1.id, tg2.id]));
      expect(await ids({ chatKey: "chat-2" })).toEqual(new Set([tg2.id]));
      expect(await ids({ source: "telegram", chatKey: "chat-1" })).toEqual(new Set([tg1.id]));
      expect(await ids({ ended: true })).toEqual(new Set([ended.id]));
      expect(await ids({ ended: false })).toEqual(new Set([cli.id, tg1.id, tg2.id, pinned.id]));
      expect(await ids({ pinned: true })).toEqual(new Set([pinned.id]));
      expect(await ids({ pinned: false })).toEqual(new Set([cli.id, tg1.id, tg2.id, ended.id]));
      // Archived sessions are left out unless asked for.
      expect(await ids({ source: "cli" })).toEqual(new Set([cli.id]));
      expect(await ids({ source: "cli", includeArchived: true })).toEqual(
        new Set([cli.id, archived.id]),
      );
      expect((await store.sessions.list()).items).toHaveLength(5);
      expect((await store.sessions.list({ includeArchived: true })).items).toHaveLength(6);
    });

    it("leaves hidden sessions out unless includeHidden", async () => {
      const visible = await store.sessions.create();
      const hidden = await store.sessions.create();
      await store.sessions.setHidden(hidden.id, true);
      expect((await store.sessions.list()).items.map((s) => s.id)).toEqual([visible.id]);
      const all = await store.sessions.list({ includeHidden: true });
      expect(new Set(all.items.map((s) => s.id))).toEqual(new Set([visible.id, hidden.id]));
    });

    it.each([0, -1, 1.5, 501, Number.NaN])("rejects limit %s with a RangeError", async (limit) => {
      await expect(store.sessions.list({ limit })).rejects.toThrow(RangeError);
    });

    it.each([
      "not a cursor",
      Buffer.from("{}").toString("base64url"),
      Buffer.from(JSON.stringify(["1", 2])).toString("base64url"),
      Buffer.from(JSON.stringify([1, "a", 3])).toString("base64url"),
    ])("rejects a cursor it did not hand out (%s) with a RangeError", async (cursor) => {
      await store.sessions.create();
      await expect(store.sessions.list({ cursor })).rejects.toThrow(RangeError);
    });
  });

  describe("sessions.rename", () => {
    it("refuses a user title another visible session holds, and changes nothing", async () => {
      const a = await store.sessions.create({ title: "Alpha" });
      const b = await store.sessions.create({ title: "Beta" });
      await expectHearthError(store.sessions.rename(b.id, "Alpha"), "HEARTH_TITLE_TAKEN");
      // Whitespace is normalised before the comparison.
      await expectHearthError(store.sessions.rename(b.id, "  Alpha  "), "HEARTH_TITLE_TAKEN");
      expect(await store.sessions.require(a.id)).toEqual(a);
      expect(await store.sessions.require(b.id)).toEqual(b);
    });

    it("renames with a user title and collapses whitespace", async () => {
      const s = await store.sessions.create();
      const renamed = await store.sessions.rename(s.id, "  Trip   to  Lisbon ");
      expect(renamed.title).toBe("Trip to Lisbon");
      expect(renamed.titleSource).toBe("user");
      const cleared = await store.sessions.rename(s.id, null);
      expect(cleared.title).toBeNull();
      expect(cleared.titleSource).toBeNull();
    });

    it("never lets an automatic title replace a user title", async () => {
      const s = await store.sessions.create({ title: "Mine" });
      const after = await store.sessions.rename(s.id, "Generated", "auto");
      expect(after.title).toBe("Mine");
      expect(after.titleSource).toBe("user");
      expect(await store.sessions.require(s.id)).toMatchObject({
        title: "Mine",
        titleSource: "user",
      });
    });

    it("lets a user title replace an automatic one, and an automatic one replace another", async () => {
      const s = await store.sessions.create({ title: "Draft", titleSource: "auto" });
      const auto = await store.sessions.rename(s.id, "Better draft", "auto");
      expect(auto).toMatchObject({ title: "Better draft", titleSource: "auto" });
      const user = await store.sessions.rename(s.id, "Final");
      expect(user).toMatchObject({ title: "Final", titleSource: "user" });
    });

    it('suffixes a colliding automatic title with " (2)", " (3)", ...', async () => {
      await store.sessions.create({ title: "Weather" });
      const b = await store.sessions.create();
      const c = await store.sessions.create();
      expect(await store.sessions.rename(b.id, "Weather", "auto")).toMatchObject({
        title: "Weather (2)",
        titleSource: "auto",
      });
      expect(await store.sessions.rename(c.id, "Weather", "auto")).toMatchObject({
        title: "Weather (3)",
        titleSource: "auto",
      });
    });

    it("does not count archived sessions as holding a title", async () => {
      const old = await store.sessions.create({ title: "Notes" });
      await store.sessions.setArchived(old.id, true);
      const fresh = await store.sessions.create({ title: "Notes" });
      expect(fresh.title).toBe("Notes");
      const other = await store.sessions.create();
      await store.sessions.setArchived(fresh.id, true);
      expect((await store.sessions.rename(other.id, "Notes")).title).toBe("Notes");
    });

    it("refuses to unarchive (or unhide) a session into a title conflict, and leaves it as it was", async () => {
      const old = await store.sessions.create({ title: "Notes" });
      await store.sessions.setArchived(old.id, true);
      await store.sessions.create({ title: "Notes" });
      await expectHearthError(store.sessions.setArchived(old.id, false), "HEARTH_TITLE_TAKEN");
      expect(await store.sessions.require(old.id)).toMatchObject({
        archived: true,
        title: "Notes",
      });

      const hidden = await store.sessions.create({ title: "Secret" });
      await store.sessions.setHidden(hidden.id, true);
      await store.sessions.create({ title: "Secret" });
      await expectHearthError(store.sessions.setHidden(hidden.id, false), "HEARTH_TITLE_TAKEN");
      expect((await store.sessions.require(hidden.id)).hidden).toBe(true);
    });

    it("rename of an unknown session is HEARTH_SESSION_NOT_FOUND", async () => {
      await expectHearthError(store.sessions.rename("nope", "x"), "HEARTH_SESSION_NOT_FOUND");
    });
  });

  describe("sessions.end / resume", () => {
    it("ends with a reason and resumes", async () => {
      const s = await store.sessions.create();
      const ended = await store.sessions.end(s.id, "idle");
      expect(ended.endedAt).toEqual(expect.any(Number));
      expect(ended.endReason).toBe("idle");
      expect((await store.sessions.list({ ended: true })).items.map((x) => x.id)).toEqual([s.id]);

      await tick();
      const resumed = await store.sessions.resume(s.id);
      expect(resumed.endedAt).toBeNull();
      expect(resumed.endReason).toBeNull();
      expect(resumed.lastActivityAt).toBeGreaterThan(ended.lastActivityAt);
      expect((await store.sessions.list({ ended: true })).items).toEqual([]);
    });

    it("end and resume of an unknown session are HEARTH_SESSION_NOT_FOUND", async () => {
      await expectHearthError(store.sessions.end("nope", "idle"), "HEARTH_SESSION_NOT_FOUND");
      await expectHearthError(store.sessions.resume("nope"), "HEARTH_SESSION_NOT_FOUND");
    });
  });

  describe("sessions.delete", () => {
    it("deletes the session and every message in it, history included", async () => {
      const keep = await store.sessions.create();
      const gone = await store.sessions.create();
      await store.messages.appendBatch(keep.id, [
        { role: "user", content: "keep 1" },
        { role: "assistant", content: "keep 2" },
      ]);
      await store.messages.appendBatch(gone.id, [
        { role: "user", content: "gone 1" },
        { role: "assistant", content: "gone 2" },
        { role: "user", content: "gone 3" },
      ]);
      await store.messages.rewind(gone.id, 0);
      expect(await store.counts()).toEqual({
        sessions: 2,
        messages: 5,
        activeMessages: 3,
        archivedMessages: 2,
      });

      expect(await store.sessions.delete(gone.id)).toBe(true);
      expect(await store.counts()).toEqual({
        sessions: 1,
        messages: 2,
        activeMessages: 2,
        archivedMessages: 0,
      });
      expect(await store.sessions.get(gone.id)).toBeNull();
      expect(await store.search("gone", { includeHistory: true })).toEqual([]);
      expect(await store.messages.load(keep.id)).toHaveLength(2);
      expect(await store.sessions.delete(gone.id)).toBe(false);
    });
  });

  describe("automatic titles on create", () => {
    it("get a suffix when the title is taken, while a taken user title is refused", async () => {
      await store.sessions.create({ title: "Chat" });
      const auto = await store.sessions.create({ title: "Chat", titleSource: "auto" });
      expect(auto).toMatchObject({ title: "Chat (2)", titleSource: "auto" });
      await expect(store.sessions.create({ title: "Chat" })).rejects.toMatchObject({
        code: "HEARTH_TITLE_TAKEN",
      });
      expect((await store.counts()).sessions).toBe(2);
    });
  });
});
