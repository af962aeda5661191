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

/** Note the -shm a store of this process now uses (its guard's descriptor). */
export function rememberIndex(key: string, shm: { dev: number; ino: number } | undefined): void {
  if (!shm) return;
  const set = attached.get(key) ?? new Set<string>();
  set.add(`${lockDevice(shm.dev)}:${shm.ino}`);
  attached.set(key, set);
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
    maps = readFileSync("/proc/self/maps", "utf8");
    shm = `${join(realpathSync(dirname(path)), basename(path))}-shm`;
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
      (earlier.has(id) && id !== current);
    if (removed)
      throw refusal(path, "a connection of this process still maps the removed -shm", doing);
  }
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
