import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/index.js";
import type { ImportedMessage, ImportedSession } from "../../src/store/imports.js";
import { backends, TestHomes } from "./fixture.js";

const T = 1_767_000_000_000;

function session(over: Partial<ImportedSession> = {}): ImportedSession {
  return {
    id: "x-1",
    source: "telegram",
    chatKey: "555",
    title: "Imported",
    titleSource: "user",
    createdAt: T,
    endedAt: T + 60_000,
    endReason: "compression",
    parentId: null,
    ownerId: "alice",
    pinned: true,
    archived: false,
    hidden: false,
    metadata: { from: "elsewhere" },
    ...over,
  };
}

const msg = (n: number, over: Partial<ImportedMessage> = {}): ImportedMessage => ({
  role: n % 2 ? "assistant" : "user",
  content: `message ${n} ✓`,
  clientId: `x:${n}`,
  createdAt: T + n * 1000,
  active: true,
  archivedReason: null,
  tokensIn: 3,
  ...over,
});

describe.each(backends)("imports on $name", (backend) => {
  const homes = new TestHomes(backend);
  let store: Store;

  beforeEach(async () => {
    store = await homes.open(homes.makeHome());
  });

  afterEach(async () => {
    await homes.cleanup();
  });

  it("creates the session with its own times and flags, and the messages with theirs", async () => {
    const r = await store.imports.write(session(), [
      msg(0),
      msg(1, { active: false, archivedReason: "compaction" }),
      msg(2),
    ]);
    expect(r).toEqual({
      created: true,
      storedTitle: "Imported",
      inserted: 3,
      skipped: 0,
      restated: 0,
    });
    const s = await store.sessions.require("x-1");
    expect(s).toMatchObject({
      source: "telegram",
      chatKey: "555",
      title: "Imported",
      createdAt: T,
      endedAt: T + 60_000,
      endReason: "compression",
      ownerId: "alice",
      pinned: true,
      messageCount: 2,
      tokenCount: 9,
      lastActivityAt: T + 2000,
      metadata: { from: "elsewhere" },
    });
    const all = await store.messages.load("x-1", { includeHistory: true });
    expect(
      all.map((m) => [m.ordinal, m.clientId, m.active, m.archivedReason, m.createdAt]),
    ).toEqual([
      [0, "x:0", true, null, T],
      [1, "x:1", false, "compaction", T + 1000],
      [2, "x:2", true, null, T + 2000],
    ]);
  });

  it("is idempotent on clientIds, appends what is new, and takes the source's archived state", async () => {
    await store.imports.write(session(), [msg(0), msg(1)]);
    const again = await store.imports.write(session({ title: "Other" }), [
      msg(0, { active: false, archivedReason: "rewind" }),
      msg(1),
      msg(2),
    ]);
    expect(again).toEqual({
      created: false,
      storedTitle: null,
      inserted: 1,
      skipped: 2,
      restated: 1,
    });
    const s = await store.sessions.require("x-1");
    expect(s.title).toBe("Imported");
    expect(s.messageCount).toBe(2);
    const all = await store.messages.load("x-1", { includeHistory: true });
    expect(all.map((m) => [m.clientId, m.ordinal, m.active, m.archivedReason])).toEqual([
      ["x:0", 0, false, "rewind"],
      ["x:1", 1, true, null],
      ["x:2", 2, true, null],
    ]);
  });

  it("links a known parent, drops an unknown one, renames a taken title, and creates an empty session", async () => {
    await store.sessions.create({ title: "Imported" });
    await store.imports.write(session({ id: "p", title: null }), []);
    const child = await store.imports.write(session({ id: "c", parentId: "p" }), []);
    expect(child.storedTitle).toBe("Imported (2)");
    const orphan = await store.imports.write(
      session({ id: "o", parentId: "gone", title: null }),
      [],
    );
    expect(orphan).toMatchObject({ created: true, inserted: 0 });
    expect((await store.sessions.require("c")).parentId).toBe("p");
    expect((await store.sessions.require("o")).parentId).toBeNull();
    expect((await store.sessions.require("p")).messageCount).toBe(0);
  });

  it("checks every input before writing anything", async () => {
    await expect(store.imports.write(session({ createdAt: -1 }), [])).rejects.toThrow(RangeError);
    await expect(
      store.imports.write(session(), [msg(0), msg(1, { clientId: "" })]),
    ).rejects.toThrow(TypeError);
    await expect(
      store.imports.write(session(), [msg(0, { active: false, archivedReason: null })]),
    ).rejects.toThrow(TypeError);
    await expect(
      store.imports.write(session(), [msg(0, { role: "narrator" as "user" })]),
    ).rejects.toThrow(TypeError);
    expect(await store.sessions.get("x-1")).toBeNull();
  });

  it.runIf(backend.name === "postgres")(
    "refuses text PostgreSQL cannot hold, before writing",
    async () => {
      for (const [s, m] of [
        [session({ title: "a\u0000b" }), [msg(0)]],
        [session(), [msg(0, { content: "nul \u0000 inside" })]],
      ] as const) {
        const err = await store.imports.write(s, [...m]).then(
          () => null,
          (e: { code?: string }) => e,
        );
        expect(err?.code).toBe("HEARTH_INVALID_ARG");
      }
      expect(await store.sessions.get("x-1")).toBeNull();
    },
  );
});
