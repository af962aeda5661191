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

  it("switch between a loop and a pool commit with one pragma, and set all three again after a switch that threw", async () => {
    const store = await openSqliteStore({
      home: tempHome(),
      config: { durability: { synchronous: "full", walAutocheckpointPages: 77 } },
    });
    try {
      const conn = store[internals].connection("writer");
      const now = () => [
        conn.db.pragma("synchronous", { simple: true }),
        conn.db.pragma("wal_autocheckpoint", { simple: true }),
        conn.db.pragma("journal_size_limit", { simple: true }),
      ];
      // The settings SQLite runs each transaction with (read inside it, beside the handle).
      const inside: unknown[][] = [];
      const body = conn as unknown as { commitOrRollback: (...args: unknown[]) => unknown };
      const original = body.commitOrRollback.bind(conn);
      const handle = (conn as unknown as { handle: { pragma: (s: string, o: object) => unknown } })
        .handle;
      body.commitOrRollback = (...args) => {
        inside.push(
          ["synchronous", "wal_autocheckpoint", "journal_size_limit"].map((name) =>
            handle.pragma(name, { simple: true }),
          ),
        );
        return original(...args);
      };
      const exec = (conn as unknown as { handle: { exec: (sql: string) => unknown } }).handle;
      const run = exec.exec.bind(exec);
      const execs: string[] = [];
      let failNext = false;
      exec.exec = (sql) => {
        execs.push(sql);
        if (failNext) {
          failNext = false;
          throw new Error("injected: the switch failed");
        }
        return run(sql);
      };
      let n = 0;
      const write = () =>
        conn
          .stmt(
            `INSERT INTO meta (key, value, updated_at) VALUES ('switch', ?, 0)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
          )
          .run(String(n++));
      for (const mode of ["pool", "loop", "pool", "loop", "loop", "pool"] as const) {
        conn.transaction(write, mode);
      }
      const loop = [2, 0, -1];
      const pool = [0, 0, -1];
      expect(inside).toEqual([pool, loop, pool, loop, loop, pool]);
      // In from the configured settings (3), then one pragma per switch (4 switches).
      const pragmas = (sql: string[]) => sql.join("; ").split("PRAGMA").length - 1;
      expect(pragmas(execs)).toBe(3 + 4);
      expect(execs.slice(1)).toEqual([
        "PRAGMA synchronous = FULL",
        "PRAGMA synchronous = OFF",
        "PRAGMA synchronous = FULL",
        "PRAGMA synchronous = OFF",
      ]);
      // Any other use finds the configured settings.
      expect(now()).toEqual([2, 77, 64 * 1024 * 1024]);
      // A switch that throws: the transaction does not run, and the next use sets all three.
      conn.transaction(write, "loop");
      failNext = true;
      expect(() => conn.transaction(write, "pool")).toThrow(/injected/);
      expect(now()).toEqual([2, 77, 64 * 1024 * 1024]);
      expect(execs.at(-1)).toBe(
        `PRAGMA synchronous = FULL; PRAGMA wal_autocheckpoint = 77; PRAGMA journal_size_limit = ${64 * 1024 * 1024}`,
      );
    } finally {
      await store.close();
    }
  });
});
