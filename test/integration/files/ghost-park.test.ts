import { readdirSync, unlinkSync } from "node:fs";
import { basename, dirname } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { type HearthError, isHearthError } from "../../../src/index.js";
import { internals } from "../../../src/store/sqlite/store.js";
import { openSqliteStore, tempHome } from "../../helpers/home.js";
import { startWorker } from "../../helpers/worker.js";

// A maintenance window parks a process: its connections close, and the
// window's process then works on the files as they are. When -wal and -shm
// were removed just before (the torture run of 2026-12-06, seed 42: an
// optimize window 145 ms after the deletion, 40 acknowledged writes gone
// with no report), the commits only the removed WAL holds must be saved
// before the park closes the writer that still sees them (F3). SQLite's
// own checkpoint at close does not: it needs every other process off the
// database, and another process of the removed generation was still on it.

describe("a park on a removed generation (F3)", () => {
  it("saves what only the removed WAL holds before the writer closes, with another process still on it", async () => {
    const home = tempHome();
    const store = await openSqliteStore({ home });
    const session = await store.sessions.create({ title: "parked on a ghost" });
    for (let i = 0; i < 5; i++)
      await store.messages.append(session.id, { role: "user", content: `acknowledged ${i}` });
    // Another process of this generation (a dashboard, a worker), reading.
    const beside = await startWorker();
    await beside.call("open", { home, role: "reader" });
    expect(await beside.call<unknown[]>("tail", { sessionId: session.id, n: 100 })).toHaveLength(5);
    unlinkSync(`${store.path}-wal`);
    unlinkSync(`${store.path}-shm`);
    // No write came since: this process has not noticed. A window's claimant asks it to park.
    await store.park();
    await beside.kill(); // gone without a checkpoint (a reader never makes one)
    // The window's process opens the files as they are now.
    const other = await startWorker();
    try {
      await other.call("open", { home, role: "reader" });
      const tail = await other.call<{ content: string }[]>("tail", {
        sessionId: session.id,
        n: 100,
      });
      expect(tail.map((m) => m.content)).toEqual([0, 1, 2, 3, 4].map((i) => `acknowledged ${i}`));
    } finally {
      await other.kill();
    }
    await store.resume();
    expect(await store.messages.tail(session.id, 10)).toHaveLength(5);
    await store.close();
  });

  it("refuses the window, naming the commits and keeping a copy, when another process already uses newer files", async () => {
    const home = tempHome();
    const store = await openSqliteStore({ home });
    const session = await store.sessions.create({ title: "parked beside a newcomer" });
    await store.messages.append(session.id, { role: "user", content: "in the database file" });
    store[internals].connection("writer").db.pragma("wal_checkpoint(TRUNCATE)");
    for (let i = 0; i < 3; i++)
      await store.messages.append(session.id, { role: "user", content: `only in the WAL ${i}` });
    unlinkSync(`${store.path}-wal`);
    unlinkSync(`${store.path}-shm`);
    // A newcomer (another process): its open makes a new -wal and -shm, and it reads the database file alone.
    const newcomer = await startWorker();
    try {
      await newcomer.call("open", { home, role: "reader" });
      expect(await newcomer.call<unknown[]>("tail", { sessionId: session.id, n: 10 })).toHaveLength(
        1,
      );
      const refused = await store.park().then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(isHearthError(refused, "HEARTH_GENERATION_LOST")).toBe(true);
      const { copy } = (refused as HearthError).details as { copy: string };
      expect(readdirSync(dirname(store.path))).toContain(basename(copy));
      const kept = new Database(copy, { readonly: true });
      const rows = kept.prepare("SELECT content FROM messages ORDER BY id").all();
      kept.close();
      expect(rows).toContainEqual({ content: "only in the WAL 2" });
      // The window is refused and the process not parked: its next write learns of the removed
      // files, and a reopen goes on without the commits (the loss was reported once, with a copy).
      expect(store.isParked).toBe(false);
      await expect(
        store.messages.append(session.id, { role: "user", content: "after" }),
      ).rejects.toMatchObject({ code: "HEARTH_GENERATION_CHANGED" });
      await store.reopen();
      await store.messages.append(session.id, { role: "user", content: "after" });
    } finally {
      await newcomer.kill();
      await store.close();
    }
  });
});
