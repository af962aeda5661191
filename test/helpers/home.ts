import { sqliteOnly } from "../../src/store/api.js";
import { type OpenStoreOptions, openStore } from "../../src/store/open.js";
import type { SqliteStore } from "../../src/store/sqlite/store.js";

export { cleanupFileHomes, cleanupHomes, tempHome } from "./temp-home.js";

/**
 * openStore() for tests that use the SQLite store's file-level members
 * (park, reopen, the structural gate, internals): the store, narrowed.
 */
export async function openSqliteStore(options: OpenStoreOptions = {}): Promise<SqliteStore> {
  return sqliteOnly(await openStore(options), "this test");
}
