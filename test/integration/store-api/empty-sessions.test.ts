import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SqliteStore as Store } from "../../../src/index.js";
import { internals } from "../../../src/store/sqlite/store.js";
import { TestHomes, tick } from "./fixture.js";

/**
 * D2: "empty session" means no message rows at all, never a denormalised
 * counter. The field story: a sweep trusted message_count and hard-deleted
 * rewound transcripts.
 */

const homes = new TestHomes();
let store: Store;

beforeEach(async () => {
  store = await homes.open(homes.makeHome());
});

afterEach(async () => {
  await homes.cleanup();
});

async function rewoundSession(): Promise<string> {
  const s = await store.sessions.create({ title: "rewound" });
  await store.messages.appendBatch(s.id, [
    { role: "user", content: "first try" },
    { role: "assistant", content: "first answer" },
  ]);
  await store.messages.rewind(s.id, -1);
  return s.id;
}

describe("sessions.deleteEmpty (D2)", () => {
  it("deletes only sessions with no message rows; rewound and compacted ones survive with their history", async () => {
    const empty1 = await store.sessions.create();
    const empty2 = await store.sessions.create();
    const live = await store.sessions.create();
    await store.messages.append(live.id, { role: "user", content: "hi" });
    const rewound = await rewoundSession();
    const compacted = await store.sessions.create();
    await store.messages.appendBatch(compacted.id, [
      { role: "user", content: "q" },
      { role: "assistant", content: "a" },
    ]);
    await store.messages.compact(compacted.id, { content: "summary" });

    // The precondition that made the field sweep delete history: the counter says 0.
    const rewoundRow = await store.sessions.require(rewound);
    expect(rewoundRow.messageCount).toBe(0);
    expect(await store.messages.load(rewound)).toEqual([]);

    const deleted = await store.sessions.deleteEmpty();
    expect(new Set(deleted)).toEqual(new Set([empty1.id, empty2.id]));

    expect(await store.sessions.get(empty1.id)).toBeNull();
    expect(await store.sessions.get(empty2.id)).toBeNull();
    expect(await store.sessions.get(live.id)).not.toBeNull();
    expect(await store.sessions.get(rewound)).not.toBeNull();
    expect(await store.sessions.get(compacted.id)).not.toBeNull();
    const history = await store.messages.load(rewound, { includeHistory: true });
    expect(history.map((m) => [m.content, m.archivedReason])).toEqual([
      ["first try", "rewind"],
      ["first answer", "rewind"],
    ]);
    expect(await store.messages.load(compacted.id, { includeHistory: true })).toHaveLength(3);
    expect(await store.counts()).toEqual({
      sessions: 3,
      messages: 6,
      activeMessages: 2,
      archivedMessages: 4,
    });
    // Nothing left to sweep.
    expect(await store.sessions.deleteEmpty()).toEqual([]);
  });

  it("is not fooled by a counter that disagrees with the rows, in either direction", async () => {
    // Drive message_count out of step with the rows through the real writer
    // connection, as a bug, a crash of an older build or a hand edit could.
    const withRows = await store.sessions.create();
    await store.messages.append(withRows.id, { role: "user", content: "still here" });
    const noRows = await store.sessions.create();
    const writer = store[internals].connection("writer");
    writer.db.prepare("UPDATE sessions SET message_count = 0 WHERE id = ?").run(withRows.id);
    writer.db.prepare("UPDATE sessions SET message_count = 5 WHERE id = ?").run(noRows.id);
    expect((await store.sessions.require(withRows.id)).messageCount).toBe(0);

    expect(await store.sessions.deleteEmpty({ dryRun: true })).toEqual([noRows.id]);
    expect(await store.sessions.deleteEmpty()).toEqual([noRows.id]);
    expect(await store.messages.load(withRows.id)).toHaveLength(1);
  });

  it("keeps pinned empty sessions", async () => {
    const pinned = await store.sessions.create();
    await store.sessions.setPinned(pinned.id, true);
    const plain = await store.sessions.create();
    expect(await store.sessions.deleteEmpty()).toEqual([plain.id]);
    expect(await store.sessions.get(pinned.id)).not.toBeNull();
  });

  it("dryRun returns the ids it would delete and deletes nothing", async () => {
    const a = await store.sessions.create();
    const b = await store.sessions.create();
    await rewoundSession();
    const would = await store.sessions.deleteEmpty({ dryRun: true });
    expect(new Set(would)).toEqual(new Set([a.id, b.id]));
    expect((await store.counts()).sessions).toBe(3);
    expect(await store.sessions.get(a.id)).not.toBeNull();
    expect(new Set(await store.sessions.deleteEmpty())).toEqual(new Set(would));
    expect((await store.counts()).sessions).toBe(1);
  });

  it("respects olderThanMs: recently active empty sessions are kept", async () => {
    const old = await store.sessions.create();
    await tick(250);
    const recent = await store.sessions.create();
    expect(await store.sessions.deleteEmpty({ olderThanMs: 60_000, dryRun: true })).toEqual([]);
    expect(await store.sessions.deleteEmpty({ olderThanMs: 150 })).toEqual([old.id]);
    expect(await store.sessions.get(old.id)).toBeNull();
    expect(await store.sessions.get(recent.id)).not.toBeNull();
    expect(await store.sessions.deleteEmpty({ olderThanMs: 0 })).toEqual([recent.id]);
  });
});
