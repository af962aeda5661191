import { unlinkSync } from "node:fs";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { databasePath } from "../../../src/config/paths.js";
import { openStore } from "../../../src/index.js";
import { ProfileAccess } from "../../../src/scheduler/profile-access.js";
import { withStore } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { until } from "../../helpers/process.js";
import { startScheduler, untilRuns, writeJobs } from "../../helpers/scheduler.js";

// A long-lived scheduler whose store's -wal and -shm someone removed (F3)
// goes on recording its runs on the current files, as the gateway does
// (src/gateway/recovery.ts), without a restart. A store it opens while none
// of its own is open attaches to the current files anyway (it holds none
// between its writes); one opened beside another shares that one's
// connection, which ProfileAccess reattaches (the second test).

/** A careless cleanup: checkpoint everything into the database, then remove the sidecars. */
function removeSidecars(path: string): void {
  const raw = new Database(path);
  raw.pragma("wal_checkpoint(PASSIVE)");
  raw.close();
  unlinkSync(`${path}-wal`);
  unlinkSync(`${path}-shm`);
}

const ran = (r: { outcome: string }) => r.outcome !== "running" && r.outcome !== "skipped";

describe("the scheduler recovers from a generation change (F3)", () => {
  it("records its runs on the new files after -wal and -shm are removed under it", async () => {
    const home = tempHome();
    writeJobs(home, [{ name: "reap", schedule: "* * * * * *", kind: "reap-idle" }]);
    const s = await startScheduler(home);
    const before = await untilRuns(home, "two finished runs", (r) => r.filter(ran).length >= 2);
    // A reader of this process keeps the sidecars (the scheduler holds no
    // store between its writes, and the last close removes the -wal).
    const path = databasePath(home, "default");
    const reader = await openStore({ home, role: "reader" });
    removeSidecars(path);
    await reader.close();
    const after = await untilRuns(
      home,
      "two more runs recorded ok on the new files",
      (r) => r.filter((run) => ran(run) && run.id > before.at(-1)!.id).length >= 2,
      60_000,
    );
    for (const run of after.filter((r) => r.id > before.at(-1)!.id && ran(r)))
      expect(run).toMatchObject({ job: "reap", outcome: "ok", exitCode: 0 });
    expect(await s.process.stop()).toEqual({ code: 0, signal: null });
  }, 120_000);

  it("bookkeeping that sees the change reattaches the connection another piece still holds open", async () => {
    const home = tempHome();
    await (await openStore({ home })).close();
    const access = new ProfileAccess(home, ["default"]);
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let opened = false;
    // A long piece of bookkeeping keeps the process's connection open throughout.
    const holder = access.open("default", async () => {
      opened = true;
      await held;
    });
    await until("the first store open", () => opened);
    removeSidecars(databasePath(home, "default"));
    // The write that meets the change is refused (before BEGIN: nothing written) ...
    await expect(
      access.open("default", (s) => s.sessions.create({ title: "refused" })),
    ).rejects.toMatchObject({ code: "HEARTH_GENERATION_CHANGED" });
    // ... and the next lands on the current files while the first store is still open.
    const after = await access.open("default", (s) => s.sessions.create({ title: "after" }));
    release();
    await holder;
    const titles = await withStore(home, async (s) =>
      (await s.sessions.list()).items.map((x) => x.title),
    );
    expect(titles).toEqual(["after"]);
    expect(after.title).toBe("after");
  });
});
