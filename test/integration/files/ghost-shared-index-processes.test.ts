import { renameSync, unlinkSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { tempHome } from "../../helpers/home.js";
import { startWorker, type Worker } from "../../helpers/worker.js";

// The silent loss of the torture run (issue 41.5), with real processes.
// -wal and -shm are removed under a gateway and a dashboard. The dashboard
// reattaches first: it is the first user of the new -shm and keeps it live.
// The gateway saves the removed WAL and reattaches while a connection of
// its process is still on the removed files (in the run, a reader thread's
// or the checkpoint thread's; here, other code's). SQLite's unix VFS keeps
// one wal-index per database inode per process, so the gateway's new writer
// took the removed -shm as its index and wrote the new -wal behind it: the
// dashboard never saw those commits, and after the gateway was killed -9,
// the next writer (no recovery: the dashboard held the new -shm) wrote over
// them. Without the refusal below, all 30 commits acknowledged after the
// reattach were gone, integrity_check ok (1,999 in the torture run).
// With it, reopen() is refused (HEARTH_GENERATION_CHANGED, retry) until the
// last connection on the removed files is closed.

const cases = [
  { first: "the dashboard", removal: "unlinked" },
  { first: "the gateway", removal: "unlinked" },
  // A -shm renamed away keeps its mapping under the new name.
  { first: "the dashboard", removal: "renamed away" },
] as const;

/** A new process after the kill: it writes once, and every clientId it then sees. */
async function restartedSees(next: Worker, home: string, sessionId: string): Promise<string[]> {
  await next.call("open", { home });
  await next.call("append", { sessionId, content: "restarted", clientId: "next-0" });
  const tail = await next.call<{ clientId: string }[]>("tail", { sessionId, n: 200 });
  return tail.map((m) => m.clientId);
}

describe("reattach after -wal and -shm were removed, a connection of the process still on them (F3, issue 41.5)", () => {
  it.each(
    cases,
  )("$first reattaching first, -wal and -shm $removal: reopen() waits for it, and every acknowledged commit survives a kill -9", async ({
    first,
    removal,
  }) => {
    const home = tempHome();
    const [gateway, dashboard] = await Promise.all([startWorker(), startWorker()]);
    let next: Worker | undefined;
    try {
      const { path } = await gateway.call<{ path: string }>("open", { home });
      const session = await gateway.call<{ id: string }>("create", { title: "41.5" });
      await gateway.call("appendLoop", { sessionId: session.id, count: 40, prefix: "before" });
      // Other code of the gateway's process holds its own connection.
      await gateway.call("rawOpen", { path });
      await dashboard.call("open", { home });
      expect(await dashboard.call<unknown[]>("tail", { sessionId: session.id, n: 1 })).toHaveLength(
        1,
      );

      for (const suffix of ["-wal", "-shm"]) {
        if (removal === "unlinked") unlinkSync(path + suffix);
        else renameSync(path + suffix, `${path + suffix}.old`);
      }
      if (first === "the dashboard") await dashboard.call("reopen");
      const refused = await gateway.request("reopen");
      expect(refused.ok).toBe(false);
      expect(refused.error?.code).toBe("HEARTH_GENERATION_CHANGED");
      expect(refused.error?.message).toContain("still maps the removed -shm");
      // Nothing of this process maps the removed index any more: reattached.
      await gateway.call("rawClose");
      await gateway.call("reopen");
      expect(await gateway.call<string[]>("shmMaps")).toEqual([expect.stringMatching(/-shm$/)]);
      if (first === "the gateway") await dashboard.call("reopen");

      await gateway.call("appendLoop", { sessionId: session.id, count: 30, prefix: "after" });
      expect(gateway.acks.filter((a) => a.startsWith("after-"))).toHaveLength(30);
      // The dashboard reads what the gateway acknowledged.
      const seen = await dashboard.call<{ clientId: string }[]>("tail", {
        sessionId: session.id,
        n: 2,
      });
      expect(seen.map((m) => m.clientId)).toEqual(["after-28", "after-29"]);

      await gateway.kill("SIGKILL");
      next = await startWorker();
      const ids = await restartedSees(next, home, session.id);
      expect(ids.filter((id) => id.startsWith("before-"))).toHaveLength(40);
      expect(ids.filter((id) => id.startsWith("after-"))).toHaveLength(30);
      expect(ids.at(-1)).toBe("next-0");
    } finally {
      await Promise.all([gateway, dashboard, next].map((w) => w?.kill()));
    }
  });

  it("an open after a close (the first store of the process again) waits for it too, and nothing acknowledged is lost", async () => {
    const home = tempHome();
    const [gateway, dashboard] = await Promise.all([startWorker(), startWorker()]);
    let next: Worker | undefined;
    try {
      const { path } = await gateway.call<{ path: string }>("open", { home });
      const session = await gateway.call<{ id: string }>("create", { title: "41.5 open" });
      await gateway.call("appendLoop", { sessionId: session.id, count: 40, prefix: "before" });
      await gateway.call("rawOpen", { path });
      await dashboard.call("open", { home });

      unlinkSync(`${path}-wal`);
      unlinkSync(`${path}-shm`);
      await dashboard.call("reopen");
      // The gateway gives up its store and opens a new one, as the hint of a
      // replaced database file says to; its other connection is still there.
      await gateway.call("close");
      const refused = await gateway.request("open", { home });
      expect(refused.ok).toBe(false);
      expect(refused.error?.code).toBe("HEARTH_GENERATION_CHANGED");
      expect(refused.error?.message).toContain("cannot open the current files yet");
      await gateway.call("rawClose");
      await gateway.call("open", { home });

      await gateway.call("appendLoop", { sessionId: session.id, count: 30, prefix: "after" });
      const seen = await dashboard.call<{ clientId: string }[]>("tail", {
        sessionId: session.id,
        n: 1,
      });
      expect(seen.map((m) => m.clientId)).toEqual(["after-29"]);
      await gateway.kill("SIGKILL");
      next = await startWorker();
      const ids = await restartedSees(next, home, session.id);
      expect(ids.filter((id) => id.startsWith("before-"))).toHaveLength(40);
      expect(ids.filter((id) => id.startsWith("after-"))).toHaveLength(30);
    } finally {
      await Promise.all([gateway, dashboard, next].map((w) => w?.kill()));
    }
  });
});
