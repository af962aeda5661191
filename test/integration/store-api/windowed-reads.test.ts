import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../../src/index.js";
import { tempHome } from "../../helpers/home.js";

const open: Store[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

async function longSession(n: number) {
  const home = tempHome();
  const store = await openStore({ home });
  open.push(store);
  const s = await store.sessions.create({ title: "long" });
  for (let i = 0; i < n; i += 1000) {
    await store.messages.appendBatch(
      s.id,
      Array.from({ length: Math.min(1000, n - i) }, (_, j) => ({
        role: "user" as const,
        content: `m${i + j}`,
      })),
    );
  }
  return { store, id: s.id };
}

describe("windowed reads (keyset paging on ordinals)", () => {
  it("reads the tail of a 50,000-message transcript, and pages back without gap or duplicate", async () => {
    const { store, id } = await longSession(50_000);
    const tail = await store.messages.tail(id, 200);
    expect(tail.map((m) => m.ordinal)).toEqual(Array.from({ length: 200 }, (_, i) => 49_800 + i));
    const seen: number[] = [];
    let before: number | undefined;
    for (let page = 0; page < 5; page++) {
      const rows = await store.messages.load(id, {
        limit: 1000,
        order: "newest-first",
        ...(before === undefined ? {} : { beforeOrdinal: before }),
      });
      seen.push(...rows.map((m) => m.ordinal));
      before = rows[rows.length - 1]!.ordinal;
    }
    expect(seen).toEqual(Array.from({ length: 5000 }, (_, i) => 49_999 - i));
    const after = await store.messages.load(id, { afterOrdinal: 49_990 });
    expect(after.map((m) => m.content)).toEqual(
      Array.from({ length: 9 }, (_, i) => `m${49_991 + i}`),
    );
    // The window is read through the (session_id, active, ordinal) index, not by scanning.
    const db = new Database(store.path, { readonly: true });
    const plan = db
      .prepare(
        "EXPLAIN QUERY PLAN SELECT * FROM messages WHERE session_id = ? AND active = 1 AND ordinal < ? ORDER BY ordinal DESC LIMIT ?",
      )
      .all(id, 100, 10) as { detail: string }[];
    db.close();
    expect(plan.map((p) => p.detail).join(" ")).toMatch(/USING INDEX messages_live/);
    expect(plan.map((p) => p.detail).join(" ")).not.toMatch(/TEMP B-TREE/);
  });

  it("refuses bad windows with TypeError or RangeError naming the option, and an unknown session", async () => {
    const { store, id } = await longSession(10);
    await expect(store.messages.load(id, { limit: 0 })).rejects.toThrow(/options.limit/);
    await expect(store.messages.load(id, { beforeOrdinal: 1.5 })).rejects.toThrow(
      /options.beforeOrdinal/,
    );
    await expect(store.messages.load(id, { order: "sideways" as "oldest-first" })).rejects.toThrow(
      /options.order/,
    );
    await expect(store.messages.tail("no-such-session", 5)).rejects.toMatchObject({
      code: "HEARTH_SESSION_NOT_FOUND",
    });
  });
});
