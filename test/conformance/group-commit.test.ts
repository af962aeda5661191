// messages.appendMany, the gateway's group commit: one transaction, and an
// item that fails fails alone. On PostgreSQL the first attempt runs without
// savepoints and a failing item sends the batch round again, isolated; the
// items before it must then be written once, not twice. An item's error is
// coded on both backends, as a single append's would be.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Session, Store } from "../../src/index.js";
import { backends, TestHomes } from "./fixture.js";

/** A turn's item on a remembered chat session: appended only while it is the chat's open one, with a lease. */
function chatItem(sessionId: string, chatKey: string, content: string) {
  return {
    sessionId,
    message: { role: "user" as const, content },
    metaBefore: { key: `lease-${content}`, decide: () => "held" },
    openChat: { platform: "tg", chatKey },
  };
}

describe.each(backends)("group commit (messages.appendMany) on $name", (backend) => {
  const homes = new TestHomes(backend);
  let store: Store;
  let a: Session;
  let b: Session;

  beforeEach(async () => {
    store = await homes.open(homes.makeHome());
    a = await store.sessions.create({ title: "a" });
    b = await store.sessions.create({ title: "b" });
  });

  afterEach(async () => {
    await homes.cleanup();
  });

  it("openChat: an item appends only while its session is the chat's open one; else HEARTH_CHAT_MOVED, nothing written", async () => {
    const chat = await store.sessions.resolveChat("tg", "c1");
    const [first] = await store.messages.appendMany([chatItem(chat.id, "c1", "one")]);
    expect(first?.ok).toBe(true);
    await store.sessions.end(chat.id, "ended elsewhere");
    const [second] = await store.messages.appendMany([chatItem(chat.id, "c1", "two")]);
    expect(second).toMatchObject({ ok: false, error: { code: "HEARTH_CHAT_MOVED" } });
    // Nothing of the refused item was written: neither the message nor its meta.
    expect((await store.messages.load(chat.id)).map((m) => m.content)).toEqual(["one"]);
    expect(await store.meta.get("lease-two")).toBeNull();
    expect(await store.meta.get("lease-one")).toBe("held");
  });

  it("openChat: a newer session made for the chat, or the session deleted, moves the chat", async () => {
    const old = await store.sessions.resolveChat("tg", "c2");
    while (Date.now() <= old.createdAt) await new Promise((r) => setTimeout(r, 2));
    const newer = await store.sessions.create({ source: "tg", chatKey: "c2" });
    const gone = await store.sessions.resolveChat("tg", "c3");
    expect(await store.sessions.delete(gone.id)).toBe(true);
    // In one batch with items that stay good: those commit, the moved ones fail alone.
    const results = await store.messages.appendMany([
      { sessionId: a.id, message: { role: "user", content: "a0" } },
      chatItem(old.id, "c2", "to-old"),
      chatItem(newer.id, "c2", "to-newer"),
      chatItem(gone.id, "c3", "to-gone"),
    ]);
    expect(results.map((r) => (r.ok ? "ok" : (r.error as { code?: string }).code))).toEqual([
      "ok",
      "HEARTH_CHAT_MOVED",
      "ok",
      "HEARTH_CHAT_MOVED",
    ]);
    expect(await store.messages.load(old.id)).toEqual([]);
    expect((await store.messages.load(newer.id)).map((m) => m.content)).toEqual(["to-newer"]);
    expect((await store.messages.load(a.id)).map((m) => m.content)).toEqual(["a0"]);
    expect(await store.meta.get("lease-to-old")).toBeNull();
    expect(await store.meta.get("lease-to-newer")).toBe("held");
  });

  it("commits the good items once each; the bad ones fail alone, their meta undone", async () => {
    const undo = await backend.refuseContent(store, "poison");
    const set = (key: string, value: string) => ({ key, decide: () => value });
    const results = await store.messages.appendMany([
      { sessionId: a.id, message: { role: "user", content: "a0" }, metaAfter: set("k0", "v0") },
      { sessionId: b.id, message: { role: "user", content: "b0" } },
      // Refused by the database itself, after its metaBefore ran.
      {
        sessionId: a.id,
        message: { role: "user", content: "poison" },
        metaBefore: set("k1", "v1"),
      },
      { sessionId: "no-such-session", message: { role: "user", content: "lost" } },
      {
        sessionId: a.id,
        message: { role: "assistant", content: "a1" },
        metaAfter: set("k2", "v2"),
      },
    ]);
    await undo();
    expect(results.map((r) => r.ok)).toEqual([true, true, false, false, true]);
    expect(results.map((r) => (r.ok ? r.message.ordinal : null))).toEqual([0, 0, null, null, 1]);
    const failed = results.filter((r) => !r.ok) as { error: { code?: string; message: string } }[];
    expect(failed[0]!.error.message).toContain("poison refused");
    // Coded as the same refusal of a single append is.
    expect(failed[0]!.error.code).toBe(backend.dbErrorCode);
    expect(failed[1]!.error.code).toBe("HEARTH_SESSION_NOT_FOUND");

    // Exactly what the results say was written: no row twice, none of the failed ones.
    expect((await store.messages.load(a.id)).map((m) => [m.ordinal, m.content])).toEqual([
      [0, "a0"],
      [1, "a1"],
    ]);
    expect((await store.messages.load(b.id)).map((m) => m.content)).toEqual(["b0"]);
    expect((await store.sessions.require(a.id)).messageCount).toBe(2);
    expect(await store.meta.get("k0")).toBe("v0");
    expect(await store.meta.get("k1")).toBeNull();
    expect(await store.meta.get("k2")).toBe("v2");
    // The session's next ordinal went on from where the committed items left it.
    expect((await store.messages.append(a.id, { role: "user", content: "a2" })).ordinal).toBe(2);
  });

  it("a batch with no bad item commits every item", async () => {
    const results = await store.messages.appendMany(
      Array.from({ length: 40 }, (_, i) => ({
        sessionId: i % 2 ? a.id : b.id,
        message: { role: "user" as const, content: `m${i}` },
      })),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    expect(await store.messages.load(a.id)).toHaveLength(20);
    expect((await store.messages.load(b.id)).map((m) => m.ordinal)).toEqual(
      Array.from({ length: 20 }, (_, i) => i),
    );
  });
  it("decides each item's meta on what the items before it left, and replays a stored clientId", async () => {
    const stored = await store.messages.append(a.id, {
      role: "user",
      content: "first",
      clientId: "c-1",
    });
    await store.meta.set("count", "0");
    const bump = { key: "count", decide: (v: string | null) => String(Number(v) + 1) };
    const seen: (string | null)[] = [];
    const watch = {
      key: "count",
      decide: (v: string | null) => {
        seen.push(v);
        return undefined;
      },
    };
    const results = await store.messages.appendMany([
      { sessionId: a.id, message: { role: "user", content: "x", tokensIn: 3 }, metaBefore: bump },
      // The same clientId and content: the stored message, nothing inserted.
      {
        sessionId: a.id,
        message: { role: "user", content: "first", clientId: "c-1" },
        metaBefore: bump,
      },
      { sessionId: b.id, message: { role: "user", content: "y", clientId: "c-2" } },
      {
        sessionId: a.id,
        message: { role: "assistant", content: "z", tokensOut: 4 },
        metaBefore: watch,
        metaAfter: { key: "gone", decide: () => null },
      },
    ]);
    expect(results.map((r) => r.ok)).toEqual([true, true, true, true]);
    const messages = results.map((r) => (r.ok ? r.message : undefined));
    expect(messages[1]).toEqual(stored);
    expect(messages.map((m) => m?.ordinal)).toEqual([1, 0, 0, 2]);
    // Ids grow with the ordinals of one session.
    expect(messages[3]!.id).toBeGreaterThan(messages[0]!.id);
    expect(seen).toEqual(["2"]);
    expect(await store.meta.get("count")).toBe("2");
    const session = await store.sessions.require(a.id);
    expect(session.messageCount).toBe(3);
    expect(session.tokenCount).toBe(7);
    expect((await store.messages.load(a.id)).map((m) => m.content)).toEqual(["first", "x", "z"]);
    expect((await store.messages.load(b.id)).map((m) => m.clientId)).toEqual(["c-2"]);
  });

  it("a decision that throws fails its item alone; the items around it commit", async () => {
    const refuse = {
      key: "lease",
      decide: () => {
        throw new Error("lease held elsewhere");
      },
    };
    const results = await store.messages.appendMany([
      { sessionId: a.id, message: { role: "user", content: "kept" } },
      { sessionId: a.id, message: { role: "user", content: "refused" }, metaBefore: refuse },
      { sessionId: b.id, message: { role: "user", content: "also kept" } },
    ]);
    expect(results.map((r) => r.ok)).toEqual([true, false, true]);
    expect((await store.messages.load(a.id)).map((m) => m.content)).toEqual(["kept"]);
    expect((await store.sessions.require(a.id)).messageCount).toBe(1);
    expect((await store.messages.load(b.id)).map((m) => m.content)).toEqual(["also kept"]);
  });
});
