import { unlinkSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import type { SqliteStore as Store } from "../../../src/index.js";
import type { PsReport } from "../../../src/ops/ps.js";
import { internals } from "../../../src/store/sqlite/store.js";
import { runCli } from "../../helpers/cli.js";
import { openSqliteStore, tempHome } from "../../helpers/home.js";

const open: Store[] = [];

afterEach(async () => {
  for (const store of open.splice(0)) await store.close();
});

/** This test process's roles on the store, as another process sees them through the kernel (P5). */
async function myRoles(home: string): Promise<string[]> {
  const r = await runCli(["--json", "ps"], { home });
  expect(r.code, r.stderr).toBe(0);
  const report = JSON.parse(r.stdout) as PsReport;
  const me = report.profiles[0]?.holders.find((h) => h.pid === process.pid);
  return me ? [...me.roles].sort() : [];
}

describe("store.reopen() keeps this process's kernel locks (C1, P4, P5)", () => {
  it("still holds presence and the shared gate after reattaching to a new generation", async () => {
    const home = tempHome();
    // Create the store and close it, so its schema is checkpointed into the main file.
    const setup = await openSqliteStore({ home });
    const session = await setup.sessions.create({ title: "reopened" });
    await setup.close();
    const store = await openSqliteStore({ home });
    open.push(store);
    expect(await myRoles(home)).toEqual(["reader", "writer"]);

    // A foreign cleanup removes the live generation; the guard stops writes; reopen recovers.
    unlinkSync(`${store.path}-wal`);
    unlinkSync(`${store.path}-shm`);
    await expect(
      store.messages.append(session.id, { role: "user", content: "ghost" }),
    ).rejects.toMatchObject({ code: "HEARTH_GENERATION_CHANGED" });
    await store.reopen();
    await store.messages.append(session.id, { role: "user", content: "after", clientId: "a" });

    // Another process still sees this one as a reader and a writer...
    expect(await myRoles(home)).toEqual(["reader", "writer"]);
    // ...and structural work from another process is still refused, naming it (P4).
    const optimize = await runCli(["sessions", "optimize"], { home });
    expect(optimize.code, optimize.stderr).toBe(3);
    expect(optimize.stderr).toContain(`pid ${process.pid}`);
  });

  it("shares the writer connection with a store opened after the reopen (C1)", async () => {
    const home = tempHome();
    const first = await openSqliteStore({ home });
    open.push(first);
    await first.reopen();
    const second = await openSqliteStore({ home });
    open.push(second);
    expect(second[internals].connection("writer")).toBe(first[internals].connection("writer"));
    // Closing one leaves the other holding everything.
    await first.close();
    expect(await myRoles(home)).toEqual(["reader", "writer"]);
    const session = await second.sessions.create({ title: "still writing" });
    expect(session.title).toBe("still writing");
  });

  it("refuses to reattach when the database file itself was replaced", async () => {
    const home = tempHome();
    const store = await openSqliteStore({ home });
    open.push(store);
    const { copyFileSync, renameSync } = await import("node:fs");
    copyFileSync(store.path, `${store.path}.copy`);
    renameSync(`${store.path}.copy`, store.path);
    await expect(store.reopen()).rejects.toMatchObject({ code: "HEARTH_GENERATION_CHANGED" });
    await expect(store.sessions.list()).rejects.toMatchObject({
      code: "HEARTH_GENERATION_CHANGED",
    });
  });
});
