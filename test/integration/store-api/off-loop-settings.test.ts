import { describe, expect, it } from "vitest";
import { internals } from "../../../src/store/store.js";
import { openSqliteStore, tempHome } from "../../helpers/home.js";

// A write-path commit that leaves its checkpoint to the WalSync runs with
// SQLite's automatic checkpoint and WAL cut off, and the configured
// settings come back right after it (src/store/connection.ts,
// allowOffLoop). SQLite applies a pragma when it compiles it: run as a
// statement prepared once, the settings were not in force in the first
// such commit.

describe("the off-loop settings of the writer connection", () => {
  it("are in force inside every write-path commit, the first one too, and configured after it", async () => {
    const store = await openSqliteStore({
      home: tempHome(),
      // "always": every commit leaves its checkpoint to the thread (never inline).
      config: { durability: { checkpointOffLoop: "always", walAutocheckpointPages: 77 } },
    });
    try {
      const conn = store[internals].connection("writer");
      const now = () => [
        conn.db.pragma("wal_autocheckpoint", { simple: true }),
        conn.db.pragma("journal_size_limit", { simple: true }),
      ];
      // What SQLite runs as the write-path transaction begins.
      const inside: unknown[][] = [];
      const body = conn as unknown as { commitOrRollback: (...args: unknown[]) => unknown };
      const original = body.commitOrRollback.bind(conn);
      body.commitOrRollback = (...args) => {
        inside.push(now());
        return original(...args);
      };
      // The store's first write-path commit.
      const session = await store.sessions.create({ title: "settings" });
      expect(now()).toEqual([77, 64 * 1024 * 1024]);
      for (let i = 0; i < 3; i++) {
        await store.messages.append(session.id, { role: "user", content: `m${i}` });
        expect(now()).toEqual([77, 64 * 1024 * 1024]);
      }
      expect(inside).toEqual([
        [0, -1],
        [0, -1],
        [0, -1],
        [0, -1],
      ]);
    } finally {
      await store.close();
    }
  });
});
