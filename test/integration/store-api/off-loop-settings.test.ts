import { describe, expect, it } from "vitest";
import { internals } from "../../../src/store/sqlite/store.js";
import { openSqliteStore, tempHome } from "../../helpers/home.js";

// A write-path commit that leaves its checkpoint to the WalSync runs with
// SQLite's automatic checkpoint and WAL cut off, and the configured
// settings come back right after it (src/store/sqlite/connection.ts,
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

  it("stay in place from one off-loop commit to the next, and every other use of the connection finds the configured ones", async () => {
    const store = await openSqliteStore({
      home: tempHome(),
      config: { durability: { synchronous: "full" } },
    });
    try {
      const conn = store[internals].connection("writer");
      // SQLite's synchronous level as each transaction begins (2: FULL, 0: OFF).
      const levels: unknown[] = [];
      const body = conn as unknown as { commitOrRollback: (...args: unknown[]) => unknown };
      const original = body.commitOrRollback.bind(conn);
      body.commitOrRollback = (...args) => {
        levels.push(conn.db.pragma("synchronous", { simple: true }));
        return original(...args);
      };
      // What the connection runs with exec(): the off-loop settings going in and out.
      const handle = (conn as unknown as { handle: { exec: (sql: string) => unknown } }).handle;
      const exec = handle.exec.bind(handle);
      const execs: string[] = [];
      handle.exec = (sql) => {
        execs.push(sql);
        return exec(sql);
      };
      let n = 0;
      const write = () =>
        conn
          .stmt(
            `INSERT INTO meta (key, value, updated_at) VALUES ('lazy', ?, 0)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
          )
          .run(String(n++));
      const level = () => conn.stmt("PRAGMA synchronous").pluck().get();
      // Two commits whose fsync the WalSync makes, then one of SQLite's own.
      conn.transaction(write, "pool");
      conn.transaction(write, "pool");
      // Set once for both commits, not around each.
      expect(execs).toEqual([expect.stringContaining("PRAGMA synchronous = OFF")]);
      conn.transaction(write);
      expect(levels).toEqual([0, 0, 2]);
      expect(execs).toHaveLength(2);
      expect(execs[1]).toContain("PRAGMA synchronous = FULL");
      // A statement outside any transaction after an off-loop commit.
      conn.transaction(write, "pool");
      expect(level()).toBe(2);
      // An autocommit write after one: SQLite's own fsync, at FULL.
      conn.transaction(write, "pool");
      write();
      expect(level()).toBe(2);
      // Read back as durability() reads it.
      conn.transaction(write, "pool");
      expect(conn.setting("synchronous")).toBe(2);
      expect((await store.durability()).synchronous.actual).toBe("full");
    } finally {
      await store.close();
    }
  });
});
