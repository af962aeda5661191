import {
  copyFileSync,
  linkSync,
  mkdirSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SqliteStore as Store } from "../../../src/index.js";
import { internals } from "../../../src/store/sqlite/store.js";
import { openSqliteStore, tempHome } from "../../helpers/home.js";

// The generation guard answers for the database, -wal and -shm with one stat
// of their directory while no entry in it changed since the last check by
// file, once the directory's change time has settled (src/files/quiet-dir.ts).
// Every replacement the checks by file catch must still be caught then:
// each case below first lets the directory settle and the guard vouch for
// it, then changes the files, and the next write must be refused.

const SETTLE_MS = 120; // past QuietDir's 50 ms

async function settled(home: string): Promise<{ store: Store; path: string; sessionId: string }> {
  const store = await openSqliteStore({ home });
  const { id } = await store.sessions.create({ title: "settled" });
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  // Two writes: the first checks by file and vouches for the settled
  // directory, the second passes on its one stat.
  await store.messages.append(id, { role: "user", content: "vouched" });
  await store.messages.append(id, { role: "user", content: "on one stat" });
  return { store, path: store.path, sessionId: id };
}

async function expectRefused(store: Store, sessionId: string): Promise<void> {
  const guard = store[internals].connection("writer").guard!;
  // Past the lean window, so the check before the write runs too.
  await new Promise((resolve) => setTimeout(resolve, 5));
  await expect(
    store.messages.append(sessionId, { role: "user", content: "to a ghost?" }),
  ).rejects.toMatchObject({ code: "HEARTH_GENERATION_CHANGED" });
  expect(guard.isGhost).toBe(true);
  await store.close();
}

describe("the generation guard (F3) once the files' directory has settled", () => {
  it("stops a writer whose -wal and -shm were unlinked", async () => {
    const { store, path, sessionId } = await settled(tempHome());
    unlinkSync(`${path}-wal`);
    unlinkSync(`${path}-shm`);
    await expectRefused(store, sessionId);
  });

  it("stops a writer whose database file was replaced by a rename", async () => {
    const { store, path, sessionId } = await settled(tempHome());
    copyFileSync(path, `${path}.copy`);
    renameSync(`${path}.copy`, path);
    await expectRefused(store, sessionId);
  });

  it("stops a writer whose -wal was renamed away, or replaced, or kept only by a hard link", async () => {
    for (const change of ["away", "over", "link"] as const) {
      const home = tempHome();
      const { store, path, sessionId } = await settled(home);
      const wal = `${path}-wal`;
      if (change === "away") renameSync(wal, join(home, "moved-wal"));
      if (change === "over") {
        copyFileSync(wal, `${wal}.copy`);
        renameSync(`${wal}.copy`, wal);
      }
      if (change === "link") {
        linkSync(wal, join(home, "kept-wal"));
        unlinkSync(wal);
      }
      await expectRefused(store, sessionId);
    }
  });

  it("stops a writer whose store directory was renamed away and another put in its place", async () => {
    const home = tempHome();
    const { store, path, sessionId } = await settled(home);
    const dir = dirname(path);
    renameSync(dir, `${dir}.moved`);
    mkdirSync(dir);
    try {
      await expectRefused(store, sessionId);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      renameSync(`${dir}.moved`, dir);
    }
  });

  it("a harmless new entry in the directory sends the next check back to the files, and writes go on", async () => {
    const { store, path, sessionId } = await settled(tempHome());
    writeFileSync(join(dirname(path), "note.txt"), "not a store file");
    await store.messages.append(sessionId, { role: "user", content: "still good" });
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    await store.messages.append(sessionId, { role: "user", content: "settled again" });
    // And a replacement after it settled again is still caught.
    unlinkSync(`${path}-shm`);
    await expectRefused(store, sessionId);
  });
});
