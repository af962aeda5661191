import { readFileSync, realpathSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { HearthError } from "../../errors.js";
import { lstatOrNull } from "../../files/inspect.js";
import { lockDevice } from "../../process/proc-locks.js";

/**
 * Every -shm a store of this process attached to, by database (its
 * "dev:ino" registry key; each -shm as "major:minor:inode", as
 * /proc/self/maps prints them): a -shm renamed
 * away keeps its mapping under the new name, so the name alone would not
 * tell it is a removed one. A handful per database over a process's life.
 */
const attached = new Map<string, Set<string>>();

/**
 * The database that attached each -shm last. Inodes are reused: once a
 * removed -shm is unmapped everywhere and unlinked, another database's new
 * -shm may get its number, and that mapping is no removed index of the
 * first database (while mapped, the old file keeps its inode: no reuse).
 * Without this, a process that closed a store and later opened another
 * could refuse, for as long as the second stayed open, every first open of
 * a database whose inode was the first's (seen opening 200 fresh profiles
 * after closing 200 others: HEARTH_GENERATION_CHANGED).
 */
const lastAttachedBy = new Map<string, string>();

/** Note the -shm a store of this process now uses (its guard's descriptor). */
export function rememberIndex(key: string, shm: { dev: number; ino: number } | undefined): void {
  if (!shm) return;
  const id = `${lockDevice(shm.dev)}:${shm.ino}`;
  const set = attached.get(key) ?? new Set<string>();
  set.add(id);
  attached.set(key, set);
  lastAttachedBy.set(id, key);
}

/**
 * Databases (their "dev:ino" keys) and -shm paths this process has had a
 * store on, or began one on: SQLite connections of hearth's own may map
 * their -shm at any moment (a reader thread opening, the checkpoint
 * thread), so a first open of one of them always reads /proc/self/maps
 * anew, in a batch too.
 */
const seen = new Set<string>();

/** One reading of /proc/self/maps shared by the first opens of a batch (withOneMapsRead). */
interface MapsBatch {
  maps?: string;
}
let batch: MapsBatch | undefined;

/** Reads of /proc/self/maps by this module (tests count them: one per batch). */
export const mapsReads = { count: 0 };

/**
 * Run `opens` (first opens of stores, a gateway's start over its N
 * profiles) sharing one reading of /proc/self/maps: the check below costs
 * the length of the maps, which grows with every store opened, so N first
 * opens read O(N²) lines (issue 44). The shared reading is used only for a
 * database and -shm path no store of this process has had (nothing of
 * hearth's own can have mapped its -shm since the reading was taken; those
 * read the maps anew), never by a reattach, and only until `opens`
 * settles. What it trusts: that no other code of this process opens SQLite
 * connections on such databases while `opens` runs (a mapping made before
 * it began is in the reading, and refused as ever). A module-level batch,
 * not an AsyncLocalStorage: on Node 20 that turns on async hooks for every
 * promise of the process for good. Batches do not nest (an inner one runs
 * inside the outer's).
 */
export async function withOneMapsRead<T>(opens: () => Promise<T>): Promise<T> {
  if (batch) return opens();
  const mine: MapsBatch = {};
  batch = mine;
  try {
    return await opens();
  } finally {
    if (batch === mine) batch = undefined;
  }
}

function readMaps(fresh: boolean): string {
  const shared = fresh ? undefined : batch;
  if (shared?.maps !== undefined) return shared.maps;
  mapsReads.count++;
  const maps = readFileSync("/proc/self/maps", "utf8");
  if (shared) shared.maps = maps;
  return maps;
}

/**
 * Refuse to open connections on new files while this process still maps a
 * removed -shm of the database (F3). SQLite's unix VFS shares one wal-index
 * mapping per database inode within a process: a connection opened then
 * would read and write the new -wal through the removed index, and every
 * other process, on the new -shm, would neither see its commits nor stop
 * writing over them. /proc/self/maps is the truth about what is mapped;
 * when it cannot be read, that counts as mapped (cannot tell: refuse).
 * Checked by reopen() before it opens new connections, and by an open that
 * starts this process's first store on the database (a store closed just
 * before may still have reader threads closing; other code of the process
 * may hold its own connection on the removed files).
 */
export function assertNoRemovedIndex(
  path: string,
  key: string,
  doing: "reopen" | "open" = "reopen",
): void {
  let maps: string;
  let shm: string;
  try {
    shm = `${join(realpathSync(dirname(path)), basename(path))}-shm`;
    // A reattach, or a database or -shm path of a store this process had: read anew.
    maps = readMaps(doing === "reopen" || seen.has(key) || seen.has(shm));
  } catch (err) {
    throw refusal(path, `its mappings cannot be read (${(err as Error).message})`, doing);
  }
  const now = lstatOrNull(shm);
  const current = now ? `${lockDevice(now.dev)}:${now.ino}` : undefined;
  const earlier = attached.get(key) ?? new Set<string>();
  for (const line of maps.split("\n")) {
    const fields = /^\S+\s+\S+\s+\S+\s+(\S+)\s+(\d+)\s+(.+)$/.exec(line);
    if (!fields) continue;
    const [, device, inode, name] = fields;
    const id = `${device}:${inode}`;
    // Under its name but another file, unlinked, or renamed away (a -shm a store here used).
    const removed =
      name === `${shm} (deleted)` ||
      (name === shm && id !== current) ||
      (earlier.has(id) && id !== current && lastAttachedBy.get(id) === key);
    if (removed)
      throw refusal(path, "a connection of this process still maps the removed -shm", doing);
  }
  // From here a store of this process may map its -shm: later checks read the maps anew.
  seen.add(key);
  seen.add(shm);
}

function refusal(path: string, why: string, doing: "reopen" | "open"): HearthError {
  const what = doing === "reopen" ? "reattach to" : "open";
  return new HearthError(
    "HEARTH_GENERATION_CHANGED",
    `${path}: cannot ${what} the current files yet: ${why}, and a new connection would share its wal-index`,
    {
      resource: path,
      // Not a lasting state: the connections that hold it close by themselves.
      details: { waitingFor: "old-connections" },
      hint:
        doing === "reopen"
          ? "retry store.reopen() in a moment; the old connections close by themselves"
          : "retry the open in a moment (the connections of a store closed a moment ago end by themselves), or close the connection this process still has on the removed files",
    },
  );
}
