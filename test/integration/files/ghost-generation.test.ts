import { copyFileSync, existsSync, linkSync, readFileSync, renameSync, unlinkSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";
import { openStore } from "../../../src/index.js";
import { internals } from "../../../src/store/sqlite/store.js";
import { openSqliteStore, tempHome } from "../../helpers/home.js";
import { startWorker } from "../../helpers/worker.js";

describe("the generation guard (F3)", () => {
  it("stops a writer whose -wal and -shm were unlinked, and reopen() recovers", async () => {
    const home = tempHome();
    // Create the store and close it, so its schema is checkpointed into the main file.
    const setup = await openStore({ home });
    const session = await setup.sessions.create({ title: "ghost" });
    await setup.close();
    const writer = await startWorker();
    const { path } = await writer.call<{ path: string }>("open", { home });
    await writer.call("append", { sessionId: session.id, content: "first", clientId: "a" });

    // Someone else's cleanup removes the live generation under the writer.
    unlinkSync(`${path}-wal`);
    unlinkSync(`${path}-shm`);

    const refused = await writer.request("append", {
      sessionId: session.id,
      content: "to the ghost",
      clientId: "b",
    });
    expect(refused.ok).toBe(false);
    expect(refused.error?.code).toBe("HEARTH_GENERATION_CHANGED");
    expect(refused.error?.message).toContain(`${path}-wal`);
    // Refused again without touching the files, until reopened.
    const again = await writer.request("append", {
      sessionId: session.id,
      content: "again",
      clientId: "c",
    });
    expect(again.error?.code).toBe("HEARTH_GENERATION_CHANGED");

    await writer.call("reopen");
    expect(existsSync(`${path}-wal`)).toBe(true);
    await writer.call("append", { sessionId: session.id, content: "after reopen", clientId: "d" });

    const reader = await openStore({ home, role: "reader" });
    const ids = (await reader.messages.load(session.id)).map((m) => m.clientId);
    expect(ids).toContain("d");
    expect(ids).not.toContain("c");
    expect(await reader.quickCheck()).toEqual({ ok: true, problems: [] });
    await reader.close();
  });

  it("stops a writer whose database file was replaced", async () => {
    const home = tempHome();
    const store = await openStore({ home });
    const session = await store.sessions.create({ title: "replaced" });
    copyFileSync(store.path, `${store.path}.copy`);
    renameSync(`${store.path}.copy`, store.path);
    await expect(
      store.messages.append(session.id, { role: "user", content: "x" }),
    ).rejects.toMatchObject({
      code: "HEARTH_GENERATION_CHANGED",
    });
    await store.close();
  });

  it("stops a writer whose -wal was replaced by a rename", async () => {
    const home = tempHome();
    const store = await openStore({ home });
    const session = await store.sessions.create({ title: "wal renamed over" });
    copyFileSync(`${store.path}-wal`, `${store.path}-wal.copy`);
    renameSync(`${store.path}-wal.copy`, `${store.path}-wal`);
    const refused = store.messages.append(session.id, { role: "user", content: "x" });
    await expect(refused).rejects.toMatchObject({ code: "HEARTH_GENERATION_CHANGED" });
    await expect(refused).rejects.toThrow(`${store.path}-wal was unlinked or replaced`);
    await store.close();
  });

  it("stops a writer whose -wal lost its name while a hard link keeps the file", async () => {
    const home = tempHome();
    const store = await openStore({ home });
    const session = await store.sessions.create({ title: "wal kept by a link" });
    // A backup tool's hard link keeps the inode (link count 1), but the name
    // every other process opens now leads to a new, empty -wal.
    linkSync(`${store.path}-wal`, `${home}/kept-wal`);
    unlinkSync(`${store.path}-wal`);
    await expect(
      store.messages.append(session.id, { role: "user", content: "x" }),
    ).rejects.toMatchObject({ code: "HEARTH_GENERATION_CHANGED" });
    await store.close();
  });

  it("stops a writer whose -wal was renamed away", async () => {
    const home = tempHome();
    const store = await openStore({ home });
    const session = await store.sessions.create({ title: "wal moved" });
    // The inode keeps its one link, under a name no other process opens: they would start a new -wal.
    renameSync(`${store.path}-wal`, `${home}/moved-wal`);
    await expect(
      store.messages.append(session.id, { role: "user", content: "x" }),
    ).rejects.toMatchObject({ code: "HEARTH_GENERATION_CHANGED" });
    await store.close();
  });

  it("leans on the last commit's check only within the window; past it, the check runs again", async () => {
    const home = tempHome();
    const store = await openSqliteStore({ home });
    await store.sessions.create({ title: "lean" });
    const guard = store[internals].connection("writer").guard!;
    guard.check();
    renameSync(`${store.path}-wal`, `${home}/moved-wal`);
    // Within the window the check before a write is skipped (the one after its commit refuses it) ...
    expect(() => guard.checkUnlessWithin(60_000)).not.toThrow();
    // ... past it, the move is found at once, and from then on every check refuses.
    expect(() => guard.checkUnlessWithin(0)).toThrow(`${store.path}-wal was unlinked or replaced`);
    expect(() => guard.checkUnlessWithin(60_000)).toThrow(/unlinked or replaced/);
    await store.close();
  });

  it("refuses, after its commit, a write that leaned on the last commit's check", async () => {
    const home = tempHome();
    const store = await openSqliteStore({ home });
    const session = await store.sessions.create({ title: "back to back" });
    const path = store.path;
    const conn = store[internals].connection("writer");
    const insert = (content: string) =>
      conn
        .stmt("INSERT INTO meta (key, value, updated_at) VALUES (?, ?, 0)")
        .run(`${session.id}-${content}`, content);
    // A first transaction of 2 ms opens the widest window (1 ms); the -wal
    // moves away right after its commit, and the next transaction begins at
    // once: its check leans on the last one, so it writes into the moved
    // file, and the check after its commit refuses to acknowledge it.
    // "At once" is made exact: the clock the guard reads stands still from
    // the first commit's last reading to the second's, so a busy machine
    // that preempts this thread between them cannot close the window.
    const realNow = performance.now.bind(performance);
    let last = 0;
    let frozen = false;
    const clock = vi.spyOn(performance, "now").mockImplementation(() => {
      if (!frozen) last = realNow();
      return last;
    });
    try {
      conn.transaction(() => {
        const until = realNow() + 2;
        while (realNow() < until);
        insert("first");
      });
      frozen = true;
      renameSync(`${path}-wal`, `${home}/moved-wal`);
      const before = readFileSync(`${home}/moved-wal`);
      expect(() => conn.transaction(() => insert("second"))).toThrow(
        expect.objectContaining({ code: "HEARTH_GENERATION_CHANGED" }),
      );
      // The second write reached the moved file (its check before BEGIN
      // leaned on the first's): the file's bytes changed. (CI's 193672 not
      // > 193672 was the check before BEGIN running instead, on a thread
      // preempted past the 1 ms window: the frozen clock above ends that.
      // The bytes, not the size, so that a write that starts the WAL over,
      // in place, would count too.)
      expect(readFileSync(`${home}/moved-wal`).equals(before)).toBe(false);
    } finally {
      clock.mockRestore();
    }
    await store.close();
  });

  it("never acknowledges a write whose files were replaced while it ran", async () => {
    const home = tempHome();
    const store = await openSqliteStore({ home });
    const session = await store.sessions.create({ title: "mid-write" });
    const path = store.path;
    // The generation changes inside the write transaction, after the check
    // before BEGIN: only the check after COMMIT can tell (a TEMP trigger of
    // this connection calls back into this process mid-transaction).
    const db = store[internals].connection("writer").db;
    db.function("unlink_generation", () => {
      unlinkSync(`${path}-wal`);
      unlinkSync(`${path}-shm`);
      return 0;
    });
    db.exec(`CREATE TEMP TRIGGER ghost_now AFTER INSERT ON main.messages
             WHEN NEW.content = 'unlink' BEGIN SELECT unlink_generation(); END`);
    await expect(
      store.messages.append(session.id, { role: "user", content: "unlink" }),
    ).rejects.toMatchObject({ code: "HEARTH_GENERATION_CHANGED" });
    await store.close();
  });
});
