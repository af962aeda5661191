import { type BigIntStats, fstatSync, readFileSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { HearthError } from "../../errors.js";
import { inodeKey, lstatOrNull } from "../../files/inspect.js";
import { lockDevice } from "../../process/proc-locks.js";

/**
 * Every -shm a store of this process attached to, by database (its
 * "dev:ino" registry key; each -shm as "major:minor:inode", as
 * /proc/self/maps prints them): a -shm renamed
 * away keeps its mapping under the new name, so the name alone would not
 * tell it is a removed one. A handful per database over a process's life.
 * `born` is the database file's birth time (statx), where the file system
 * keeps one: the key's inode is reused too once the database is removed.
 */
const attached = new Map<string, { born: bigint | undefined; shms: Set<string> }>();

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

/** A file's birth time in ns, undefined where the file system keeps none. */
function birthOf(stats: BigIntStats): bigint | undefined {
  return stats.birthtimeNs > 0n ? stats.birthtimeNs : undefined;
}

/** The birth time of the file `fd` is open on, undefined where it cannot be told. */
function bornOf(fd: number): bigint | undefined {
  try {
    return birthOf(fstatSync(fd, { bigint: true }));
  } catch {
    return undefined;
  }
}

/**
 * Note the -shm a store of this process now uses (its guard's
 * descriptor); `database` is a descriptor on the database file itself.
 */
export function rememberIndex(
  key: string,
  shm: { dev: number; ino: number } | undefined,
  database: number,
): void {
  if (!shm) return;
  const id = `${lockDevice(shm.dev)}:${shm.ino}`;
  const born = bornOf(database);
  let entry = attached.get(key);
  if (!entry || !sameBirth(entry.born, born)) {
    entry = { born, shms: new Set<string>() };
    attached.set(key, entry);
  }
  entry.shms.add(id);
  lastAttachedBy.set(id, key);
}

/** Two birth times of a "dev:ino" differ only when both are known: unknown counts as the same file. */
function sameBirth(a: bigint | undefined, b: bigint | undefined): boolean {
  return a === undefined || b === undefined || a === b;
}

/**
 * The -shm files (as maps prints them) the database at `path` attached in
 * this process. A database born after those were noted is another file on
 * a reused inode: the first database was removed, its -shm numbers may now
 * be other databases' removed ones (seen in an idle suite run: a fresh
 * database was refused for another's removed -shm, both inodes reused).
 */
function earlierIndexes(key: string, path: string): Set<string> {
  const entry = attached.get(key);
  if (!entry) return new Set<string>();
  let born: bigint | undefined;
  try {
    const now = statSync(path, { bigint: true });
    // Replaced since the key was read: cannot tell which file was born when.
    if (inodeKey(now) !== key) return entry.shms;
    born = birthOf(now);
  } catch {
    return entry.shms;
  }
  if (sameBirth(entry.born, born)) return entry.shms;
  attached.delete(key);
  return new Set<string>();
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
  const earlier = earlierIndexes(key, path);
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
