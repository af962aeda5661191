import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readdirSync,
  readSync,
  statSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { EMPTY_CONFIG_RESULT } from "../config/defaults.js";
import { isProfileName } from "../config/paths.js";
import { lstatOrNull } from "./inspect.js";

/**
 * Is `dir` recognisably hearth's own: a hearth home, or a directory at its
 * place inside one (`run`, `backups`, `backups/forensic`,
 * `profiles/<name>`, `profiles/<name>/run`)? Only then may hearth tighten
 * the permissions of a directory it did not create (S1). A home is
 * recognised by a positive mark, never by a name alone:
 *
 * - a `config.json` of this user's that parses as a JSON object whose keys
 *   (at least one) are all hearth's configuration sections; or
 * - a `state.db` this very process has open (hearth opened it after
 *   checking its application_id). The database is never opened here:
 *   closing a descriptor on a live database drops this process's locks (F2).
 *
 * Anything else (an unrelated `config.json`, an empty `{}`, one that does
 * not parse, a directory at another place) is "cannot tell": false.
 */
export function isRecognisedHearthDir(dir: string): boolean {
  const parts: string[] = [];
  let home = dir;
  for (let level = 0; level <= 3; level++) {
    if (atHearthPlace(parts) && isHearthHome(home, parts)) return true;
    const parent = dirname(home);
    if (parent === home) break;
    parts.unshift(basename(home));
    home = parent;
  }
  return false;
}

/** Is `parts` (from a home down to the directory) a place hearth puts a directory? */
function atHearthPlace(parts: readonly string[]): boolean {
  const [a, b, c] = parts;
  switch (parts.length) {
    case 0:
      return true;
    case 1:
      return a === "run" || a === "backups";
    case 2:
      return (a === "backups" && b === "forensic") || (a === "profiles" && isProfileName(b));
    case 3:
      return a === "profiles" && isProfileName(b) && c === "run";
    default:
      return false;
  }
}

function isHearthHome(home: string, parts: readonly string[]): boolean {
  if (hasHearthConfig(home) || openHere(join(home, "state.db"))) return true;
  // A profile's own database, open here, marks its directory and its run directory.
  return parts[0] === "profiles" && parts[1] !== undefined
    ? openHere(join(home, "profiles", parts[1], "state.db"))
    : false;
}

const SECTIONS = new Set(Object.keys(EMPTY_CONFIG_RESULT));
const MAX_CONFIG_BYTES = 1 << 20;

/** A config.json of this user's whose top-level keys are all hearth's sections. */
function hasHearthConfig(home: string): boolean {
  const file = join(home, "config.json");
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return false;
  }
  try {
    const st = fstatSync(fd);
    const uid = process.getuid?.();
    if (!st.isFile() || st.size > MAX_CONFIG_BYTES) return false;
    if (uid !== undefined && st.uid !== uid) return false;
    const buffer = Buffer.alloc(st.size);
    const length = readSync(fd, buffer, 0, st.size, 0);
    const parsed: unknown = JSON.parse(buffer.subarray(0, length).toString("utf8"));
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return false;
    const keys = Object.keys(parsed);
    return keys.length > 0 && keys.every((k) => SECTIONS.has(k));
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}

/** Does this process hold a descriptor on `file`? Read from /proc/self/fd without opening it. */
function openHere(file: string): boolean {
  const st = lstatOrNull(file);
  if (!st?.isFile()) return false;
  let fds: string[];
  try {
    fds = readdirSync("/proc/self/fd");
  } catch {
    return false;
  }
  for (const fd of fds) {
    try {
      const target = statSync(`/proc/self/fd/${fd}`);
      if (target.dev === st.dev && target.ino === st.ino) return true;
    } catch {
      // closed meanwhile
    }
  }
  return false;
}
