import { readdirSync, readlinkSync } from "node:fs";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { mappedIndexes } from "../../helpers/file-leaks.js";
import { tempHome } from "../../helpers/home.js";

// An open that fails leaves nothing open in the process. A damaged schema
// row fails the first pragma that reads the schema, inside the connection's
// own setup: that connection was left open, its descriptors held and its
// -shm mapped for the life of the process (a gateway retrying a damaged
// profile would pile them up). Found by the test suite's leak check
// (test/helpers/file-leaks.ts) on abuse-inputs' fuzzed damage.

/** This process's descriptors on the database and its sidecars, and its mapping of the -shm (SQLite maps no other). */
function heldOn(path: string): string[] {
  const ours = (target: string) => [path, `${path}-wal`, `${path}-shm`].includes(target);
  const fds = readdirSync("/proc/self/fd").flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`).replace(/ \(deleted\)$/, "");
      return ours(target) ? [`fd ${fd} ${target}`] : [];
    } catch {
      return []; // closed meanwhile (the readdir's own descriptor)
    }
  });
  const maps = mappedIndexes().filter((shm) => ours(shm.replace(/ \(deleted\)$/, "")));
  return [...fds, ...maps];
}

/** A store whose `messages` schema row is a NUL: SQLite cannot parse its schema. */
async function damagedSchema(): Promise<string> {
  const store = await openStore({ home: tempHome() });
  await store.sessions.create({ title: "kept" });
  await store.close();
  const db = new Database(store.path);
  db.unsafeMode(true);
  db.pragma("writable_schema = ON");
  db.prepare("UPDATE sqlite_schema SET sql = ? WHERE name = 'messages'").run("\0");
  db.close();
  return store.home;
}

describe("an open that fails", () => {
  for (const role of ["writer", "reader"] as const) {
    it(`on a damaged schema (${role}): refused with a code, and no descriptor or mapping stays`, async () => {
      const home = await damagedSchema();
      const path = `${home}/state.db`;
      expect(heldOn(path)).toEqual([]);
      await expect(openStore({ home, role })).rejects.toMatchObject({ code: "HEARTH_SQLITE" });
      expect(heldOn(path)).toEqual([]);
    });
  }
});
