/**
 * removed-index.ts refuses a first open while this process maps a -shm a
 * store of the database used before and that is no longer its -shm (renamed
 * away). Inode numbers are reused: once that -shm is unmapped and unlinked,
 * another database's new -shm may get its number. That mapping is the
 * other store's own index, and must not refuse the first database's opens
 * (it did, for as long as the other store stayed open: opening 200 fresh
 * profiles after closing 200 others). Simulated here with the real maps of
 * this process: a store's real -shm, claimed by a made-up database key.
 *
 * The database's own inode is reused too: a fresh database may get the
 * number of one that attached, in this process, a -shm whose number another
 * database's removed -shm now has (an idle suite run refused a fresh
 * profile so, in maps-batch.test.ts). The kernel picks the numbers; the
 * second test plants the state both reuses leave, on real files and maps.
 */
import {
  chmodSync,
  closeSync,
  copyFileSync,
  lstatSync,
  mkdirSync,
  openSync,
  statSync,
  unlinkSync,
} from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { expect, it } from "vitest";
import { databasePath, profileDir } from "../../../src/config/paths.js";
import { openStore, type SqliteStore } from "../../../src/index.js";
import { assertNoRemovedIndex, rememberIndex } from "../../../src/store/sqlite/removed-index.js";
import { tempHome } from "../../helpers/home.js";

/** rememberIndex() with a descriptor on `path`, closed after. */
function remember(key: string, shm: { dev: number; ino: number }, path: string): void {
  const fd = openSync(path, "r");
  try {
    rememberIndex(key, shm, fd);
  } finally {
    closeSync(fd);
  }
}

it("a mapped -shm whose inode another database attached last is not the first's removed index", async () => {
  const home = tempHome();
  const store = (await openStore({ home })) as SqliteStore;
  try {
    await store.sessions.create({ title: "maps its -shm" });
    const shm = lstatSync(`${store.path}-shm`);
    const db = lstatSync(store.path);
    const key = `${db.dev}:${db.ino}`;
    // Another database, closed and gone, whose files this path no longer names.
    const gone = "test:gone-database";
    const elsewhere = join(home, "gone.db");

    // Its -shm had this number, and it attached it last: as if its removed -shm were still mapped.
    remember(gone, shm, store.path);
    expect(() => assertNoRemovedIndex(elsewhere, gone, "open")).toThrow(
      expect.objectContaining({ code: "HEARTH_GENERATION_CHANGED" }),
    );
    // The store here attached that number after it: the inode was reused, the mapping is the store's.
    remember(key, shm, store.path);
    expect(() => assertNoRemovedIndex(elsewhere, gone, "open")).not.toThrow();
  } finally {
    await store.close();
  }
});

it("a database on a reused inode is not refused for the -shm numbers the inode's earlier database attached", async () => {
  const home = tempHome();
  await (await openStore({ home, profile: "source" })).close();
  // Another database's removed -shm, still mapped by a connection of this process.
  const other = databasePath(home, "source");
  const raw = new Database(other);
  try {
    raw.prepare("SELECT count(*) FROM sessions").get();
    const removed = lstatSync(`${other}-shm`);
    unlinkSync(`${other}-wal`);
    unlinkSync(`${other}-shm`);
    // A database new to this process, born after the other one.
    const fresh = databasePath(home, "fresh");
    mkdirSync(profileDir(home, "fresh"), { mode: 0o700 });
    copyFileSync(other, fresh);
    chmodSync(fresh, 0o600);
    const stats = statSync(fresh);
    const key = `${stats.dev}:${stats.ino}`;
    expect(statSync(fresh, { bigint: true }).birthtimeNs).not.toBe(
      statSync(other, { bigint: true }).birthtimeNs,
    );

    // Had this very database attached that -shm (renamed away since), the open is refused.
    remember(key, removed, fresh);
    await expect(openStore({ home, profile: "fresh" })).rejects.toMatchObject({
      code: "HEARTH_GENERATION_CHANGED",
    });
    // A database born earlier had this inode and attached it: the fresh one opens.
    remember(key, removed, other);
    const store = await openStore({ home, profile: "fresh" });
    await store.sessions.create({ title: "opened" });
    await store.close();
  } finally {
    raw.close();
  }
});
