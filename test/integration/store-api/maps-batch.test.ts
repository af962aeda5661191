/**
 * A gateway's start opens N profiles; each first open checks
 * /proc/self/maps for a removed -shm this process still maps
 * (src/store/sqlite/removed-index.ts), and the maps grow with every store
 * opened: O(N²) lines read at start (issue 44). In a batch
 * (openStoresTogether) the first opens share one reading; a database or
 * -shm path a store of this process had is still checked against a reading
 * of its own, since hearth's connections may have mapped it since (the
 * third case fails when the shared reading is used for those too).
 *
 * Runs in a process of its own (vitest.config.ts, OWN_PROCESS): the counts
 * assume no store of this process had the inode numbers its new databases
 * get, and ext4 reuses a removed file's at once (29 of 30 create-and-remove
 * rounds here). A CI run in the shared worker, after other files' stores,
 * counted 2 in the batch; a dev:ino a store of the process had is the one
 * way besides a reattach for a first open in a batch to read anew.
 */
import { chmodSync, copyFileSync, mkdirSync, unlinkSync } from "node:fs";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { databasePath, profileDir } from "../../../src/config/paths.js";
import { openStore, type Store } from "../../../src/index.js";
import { openStoresTogether } from "../../../src/store/open.js";
import { mapsReads } from "../../../src/store/sqlite/removed-index.js";
import { tempHome } from "../../helpers/home.js";

const PROFILES = Array.from({ length: 12 }, (_, i) => `p${i}`);
const open: Store[] = [];
const raw: Database.Database[] = [];

afterEach(async () => {
  for (const db of raw.splice(0)) db.close();
  for (const store of open.splice(0)) await store.close();
});

/** A home whose profiles exist (created and closed by another home's process would be the same). */
async function homeWith(profiles: string[]): Promise<string> {
  const home = tempHome();
  for (const profile of profiles) await (await openStore({ home, profile })).close();
  return home;
}

async function openEach(home: string, profiles: string[]): Promise<number> {
  const before = mapsReads.count;
  for (const profile of profiles) open.push(await openStore({ home, profile }));
  return mapsReads.count - before;
}

describe("first opens in one batch (openStoresTogether)", () => {
  it("12 first opens alone read /proc/self/maps 12 times; in a batch, once", async () => {
    expect(await openEach(tempHome(), PROFILES)).toBe(PROFILES.length);
    const home = tempHome();
    const reads = await openStoresTogether(() => openEach(home, PROFILES));
    expect(reads).toBe(1);
    // After the batch, a first open reads the maps again.
    expect(await openEach(home, ["later"])).toBe(1);
  });

  it("still refuses a database whose removed -shm this process maps, when a store here had it", async () => {
    const home = tempHome();
    await openStoresTogether(async () => {
      // The batch's reading is taken here, before the connection below maps anything.
      open.push(await openStore({ home, profile: "first" }));
      const store = await openStore({ home, profile: "x" });
      const session = await store.sessions.create({ title: "x" });
      await store.messages.append(session.id, { role: "user", content: "hello" });
      // Other code of this process holds its own connection on x's files.
      const db = new Database(store.path);
      raw.push(db);
      db.prepare("SELECT count(*) FROM sessions").get();
      await store.close();
      unlinkSync(`${store.path}-wal`);
      unlinkSync(`${store.path}-shm`);
      await expect(openStore({ home, profile: "x" })).rejects.toMatchObject({
        code: "HEARTH_GENERATION_CHANGED",
      });
    });
  });

  it("refuses a removed -shm mapped before the batch began, on a database new to hearth here", async () => {
    // A copy of a closed store: a path and an inode no store of this process had.
    const home = await homeWith(["source"]);
    const path = databasePath(home, "y");
    mkdirSync(profileDir(home, "y"), { mode: 0o700 });
    copyFileSync(databasePath(home, "source"), path);
    chmodSync(path, 0o600);
    const db = new Database(path);
    raw.push(db);
    db.prepare("SELECT count(*) FROM sessions").get();
    unlinkSync(`${path}-wal`);
    unlinkSync(`${path}-shm`);
    await openStoresTogether(async () => {
      // The batch's one reading, taken here, shows the removed -shm mapped.
      open.push(await openStore({ home: tempHome(), profile: "z" }));
      // (Read anew if the copy got an inode a store here had: inodes are reused.)
      await expect(openStore({ home, profile: "y" })).rejects.toMatchObject({
        code: "HEARTH_GENERATION_CHANGED",
      });
    });
  });
});
