import { existsSync, statSync, unlinkSync } from "node:fs";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { isHearthError } from "../../../src/index.js";
import { openSqliteStore, tempHome } from "../../helpers/home.js";
import { startWorker } from "../../helpers/worker.js";

// A -wal and -shm removed under a live process (someone's careless cleanup)
// take with them every commit not yet checkpointed: on a new store, the
// schema and every row. reopen() saves those commits through the connection
// that still sees the removed WAL, or, when another process already uses
// newer files, keeps a copy and says what was lost (issue 41, F3).

function removeGeneration(path: string): void {
  unlinkSync(`${path}-wal`);
  unlinkSync(`${path}-shm`);
}

async function messagesSeenElsewhere(home: string, sessionId: string): Promise<string[]> {
  const reader = await startWorker();
  try {
    await reader.call("open", { home, role: "reader" });
    const tail = await reader.call<{ content: string }[]>("tail", { sessionId, n: 100 });
    return tail.map((m) => m.content);
  } finally {
    await reader.kill();
  }
}

describe("commits that only a removed WAL holds (F3)", () => {
  it("are checkpointed into the database before reopen() attaches to new files, schema included", async () => {
    const home = tempHome();
    const store = await openSqliteStore({ home });
    const session = await store.sessions.create({ title: "only in the WAL" });
    await store.messages.append(session.id, { role: "user", content: "acknowledged" });
    // Nothing has been checkpointed yet: the database file alone holds no table of hearth's.
    expect(statSync(`${store.path}-wal`).size).toBeGreaterThan(0);
    removeGeneration(store.path);

    await expect(
      store.messages.append(session.id, { role: "user", content: "refused" }),
    ).rejects.toMatchObject({ code: "HEARTH_GENERATION_CHANGED" });
    await store.reopen();

    expect((await store.sessions.get(session.id))?.title).toBe("only in the WAL");
    await store.messages.append(session.id, { role: "user", content: "after" });
    // Another process, on the files as they are now, sees all of it. The
    // refused write is there too when it committed into the removed WAL
    // before the check after its commit refused it (the check before it
    // leans on the last commit's for up to 1 ms): an outcome its client did
    // not learn, like a lost reply, which a retry with its clientId settles.
    const seen = await messagesSeenElsewhere(home, session.id);
    expect(seen.filter((c) => c !== "refused")).toEqual(["acknowledged", "after"]);
    expect(await store.quickCheck()).toEqual({ ok: true, problems: [] });
    await store.close();
  });

  it("are saved once when two processes of the removed generation reattach", async () => {
    const home = tempHome();
    const store = await openSqliteStore({ home });
    const session = await store.sessions.create({ title: "two users" });
    const peer = await startWorker();
    try {
      await peer.call("open", { home });
      await peer.call("append", { sessionId: session.id, content: "from the peer", clientId: "p" });
      await store.messages.append(session.id, { role: "user", content: "from here" });
      removeGeneration(store.path);

      // This process saves both commits (the peer holds the removed -shm: one of the generation's own).
      await store.reopen();
      // The peer finds every frame already in the database and simply reattaches.
      await peer.call("reopen");
      await peer.call("append", { sessionId: session.id, content: "peer after", clientId: "q" });
    } finally {
      await peer.kill();
    }
    expect((await store.messages.load(session.id)).map((m) => m.content)).toEqual([
      "from the peer",
      "from here",
      "peer after",
    ]);
    await store.close();
  });

  it("are named, with a copy kept, when another process opened newer files meanwhile; the next reopen() goes on without them", async () => {
    const home = tempHome();
    const store = await openSqliteStore({ home });
    const session = await store.sessions.create({ title: "lost to a newcomer" });
    await store.messages.append(session.id, { role: "user", content: "only here" });
    removeGeneration(store.path);

    // A newcomer opens the database through new files and writes: it never
    // saw this process's commits, so writing them into the database now
    // would corrupt what it reads.
    const newcomer = await startWorker();
    let copy: string;
    try {
      await newcomer.call("open", { home });
      await newcomer.call("create", { title: "the newcomer's" });

      const lost = await store.reopen().then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(isHearthError(lost, "HEARTH_GENERATION_LOST")).toBe(true);
      if (!isHearthError(lost)) throw lost;
      const details = lost.details as { commits: number; copy: string; reason: string };
      expect(details.commits).toBeGreaterThan(0);
      expect(details.reason).toMatch(/new -wal|without the removed -shm/);
      expect(lost.message).toContain(details.copy);
      copy = details.copy;
      expect(statSync(copy).mode & 0o777).toBe(0o600);
    } finally {
      await newcomer.kill();
    }

    // The copy holds the lost commits.
    const kept = new Database(copy, { readonly: true });
    const rows = kept.prepare("SELECT content FROM messages WHERE session_id = ?").all(session.id);
    expect(rows).toEqual([{ content: "only here" }]);
    kept.close();

    // Reported once: the next reopen() attaches to the newcomer's files.
    await store.reopen();
    expect(await store.sessions.get(session.id)).toBeNull();
    expect(existsSync(`${store.path}-wal`)).toBe(true);
    await store.close();
  });
  // The newcomer's own -wal and -shm removed in turn: no new file under the
  // names is left to tell of it, only its lock on the database, which the
  // check reads from /proc/locks (three reads) and every process's fdinfo.
  it("are named when only the newcomer's lock on the database tells of it (its own files removed too)", async () => {
    const home = tempHome();
    const store = await openSqliteStore({ home });
    const session = await store.sessions.create({ title: "lost to a hidden newcomer" });
    await store.messages.append(session.id, { role: "user", content: "only here" });
    removeGeneration(store.path);
    const newcomer = await startWorker();
    try {
      await newcomer.call("open", { home });
      await newcomer.call("create", { title: "the newcomer's" });
      removeGeneration(store.path);
      const lost = await store.reopen().then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(isHearthError(lost, "HEARTH_GENERATION_LOST")).toBe(true);
      if (!isHearthError(lost)) throw lost;
      expect((lost.details as { reason: string }).reason).toBe(
        `process ${newcomer.pid} holds the database without the removed -shm`,
      );
    } finally {
      await newcomer.kill();
      await store.close().catch(() => undefined);
    }
  });

  it("are saved when the writer closes on the removed generation (a short-lived worker's last act)", async () => {
    const home = tempHome();
    const store = await openSqliteStore({ home });
    const session = await store.sessions.create({ title: "closed on a ghost" });
    await store.messages.append(session.id, { role: "user", content: "then the files went" });
    removeGeneration(store.path);
    // The worker learns of it (a refused write), then closes.
    await expect(store.sessions.create({ title: "refused" })).rejects.toMatchObject({
      code: "HEARTH_GENERATION_CHANGED",
    });
    await store.close();
    const seen = await messagesSeenElsewhere(home, session.id);
    expect(seen).toEqual(["then the files went"]);
  });
});
