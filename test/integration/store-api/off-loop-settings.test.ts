import { describe, expect, it } from "vitest";
import { internals } from "../../../src/store/store.js";
import { openSqliteStore, tempHome } from "../../helpers/home.js";

// A write-path commit that leaves its checkpoint to the WalSync runs with
// SQLite's automatic checkpoint and WAL cut off; those settings stay in
// force from one such commit to the next while the event loop's task runs,
// and the configured ones come back before anything else uses the
// connection (src/store/connection.ts, enterOffLoop).

const setup = async () => {
  const store = await openSqliteStore({
    home: tempHome(),
    // "always": every commit leaves its checkpoint to the thread (never inline).
    config: { durability: { checkpointOffLoop: "always", walAutocheckpointPages: 77 } },
  });
  const session = await store.sessions.create({ title: "settings" });
  const conn = store[internals].connection("writer");
  const now = () => [
    conn.db.pragma("wal_autocheckpoint", { simple: true }),
    conn.db.pragma("journal_size_limit", { simple: true }),
  ];
  return { store, session, conn, now };
};

describe("the off-loop settings of the writer connection", () => {
  it("are in force from the very first write-path commit on, and back to the configured ones when the loop turns", async () => {
    const { store, session, now } = await setup();
    try {
      for (let i = 0; i < 3; i++) {
        await store.messages.append(session.id, { role: "user", content: `m${i}` });
        expect(now()).toEqual([0, -1]);
      }
      await new Promise((resolve) => setImmediate(resolve));
      expect(now()).toEqual([77, 64 * 1024 * 1024]);
    } finally {
      await store.close();
    }
  });

  it("give way to the configured ones before a setting is read or a transaction without a mode runs", async () => {
    const { store, session, conn, now } = await setup();
    try {
      await store.messages.append(session.id, { role: "user", content: "a" });
      expect(now()).toEqual([0, -1]);
      // durability() reads what SQLite runs, and that is the configured value here.
      expect(Number(conn.setting("wal_autocheckpoint"))).toBe(77);
      await store.messages.append(session.id, { role: "user", content: "b" });
      expect(now()).toEqual([0, -1]);
      conn.transaction(() => {
        expect(now()).toEqual([77, 64 * 1024 * 1024]);
      });
    } finally {
      await store.close();
    }
  });
});
