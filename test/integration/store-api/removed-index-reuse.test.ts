/**
 * removed-index.ts refuses a first open while this process maps a -shm a
 * store of the database used before and that is no longer its -shm (renamed
 * away). Inode numbers are reused: once that -shm is unmapped and unlinked,
 * another database's new -shm may get its number. That mapping is the
 * other store's own index, and must not refuse the first database's opens
 * (it did, for as long as the other store stayed open: opening 200 fresh
 * profiles after closing 200 others). Simulated here with the real maps of
 * this process: a store's real -shm, claimed by a made-up database key.
 */
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { openStore, type SqliteStore } from "../../../src/index.js";
import { assertNoRemovedIndex, rememberIndex } from "../../../src/store/sqlite/removed-index.js";
import { tempHome } from "../../helpers/home.js";

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
    rememberIndex(gone, shm);
    expect(() => assertNoRemovedIndex(elsewhere, gone, "open")).toThrow(
      expect.objectContaining({ code: "HEARTH_GENERATION_CHANGED" }),
    );
    // The store here attached that number after it: the inode was reused, the mapping is the store's.
    rememberIndex(key, shm);
    expect(() => assertNoRemovedIndex(elsewhere, gone, "open")).not.toThrow();
  } finally {
    await store.close();
  }
});
