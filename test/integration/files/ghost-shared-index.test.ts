import { readFileSync, realpathSync, unlinkSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { openSqliteStore, tempHome } from "../../helpers/home.js";
import { startWorker } from "../../helpers/worker.js";

// SQLite's unix VFS shares one -shm mapping per database inode within a
// process. reopen() after someone removed -wal and -shm must close every
// connection of the process on the removed files (the reader threads' too)
// before it opens new ones; else the new writer keeps the removed wal-index,
// writes the new -wal behind it, and other processes, on the new -shm,
// neither see those commits nor stop writing over them (the torture run of
// issue 41.5 lost 1,999 acknowledged writes that way, integrity_check ok).
//
// What this file guards is the wait: with reopen()'s restart of the reader
// threads removed, the reattach is refused (removed-index.ts still sees the
// removed -shm mapped) and this test fails. The loss itself needs a second
// process on the new -shm: ghost-shared-index-processes.test.ts.

function removedIndexMapped(path: string): boolean {
  const shm = `${realpathSync(path)}-shm (deleted)`;
  return readFileSync("/proc/self/maps", "utf8")
    .split("\n")
    .some((line) => line.endsWith(shm));
}

describe("reopen() with reader threads on the removed files (F3)", () => {
  it("opens its new connections on the new -shm only, and other processes see its commits", async () => {
    const home = tempHome();
    const store = await openSqliteStore({ home, readerThreads: 1 });
    const session = await store.sessions.create({ title: "threads" });
    await store.messages.appendBatch(
      session.id,
      Array.from({ length: 2000 }, (_, i) => ({ role: "user" as const, content: `m${i}` })),
    );
    // A whole load goes to a reader thread, which keeps its connection open.
    expect(await store.messages.load(session.id)).toHaveLength(2000);

    unlinkSync(`${store.path}-wal`);
    unlinkSync(`${store.path}-shm`);
    await expect(
      store.messages.append(session.id, { role: "user", content: "refused" }),
    ).rejects.toMatchObject({ code: "HEARTH_GENERATION_CHANGED" });
    await store.reopen();
    for (let i = 0; i < 20; i++)
      await store.messages.append(session.id, { role: "assistant", content: `after-${i}` });

    expect(removedIndexMapped(store.path)).toBe(false);

    // Another process on the current files sees every commit, and writes after them.
    const other = await startWorker();
    try {
      await other.call("open", { home });
      const tail = await other.call<{ content: string }[]>("tail", {
        sessionId: session.id,
        n: 20,
      });
      expect(tail.map((m) => m.content)).toEqual(
        Array.from({ length: 20 }, (_, i) => `after-${i}`),
      );
      await other.call("append", { sessionId: session.id, content: "from the other" });
    } finally {
      await other.kill();
    }
    await store.messages.append(session.id, { role: "assistant", content: "last" });
    const mine = (await store.messages.tail(session.id, 2)).map((m) => m.content);
    expect(mine).toEqual(["from the other", "last"]);
    expect(await store.quickCheck()).toEqual({ ok: true, problems: [] });
    await store.close();
  });
});
