import { chmodSync, closeSync, constants, mkdirSync, openSync, statSync } from "node:fs";
import { HearthError } from "../errors.js";
import { lstatOrNull } from "./inspect.js";

/**
 * Make sure a hearth directory exists, is a directory we own, and is 0700.
 * A symlinked home is followed (operators move homes to other disks); the
 * database files inside are never followed.
 */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stats = statSync(dir);
  const uid = process.getuid?.();
  if (!stats.isDirectory() || (uid !== undefined && stats.uid !== uid)) {
    throw new HearthError(
      "HEARTH_PATH_UNSAFE_HOME",
      `refusing ${dir}: ${stats.isDirectory() ? `owned by uid ${stats.uid}` : "not a directory"}`,
      { resource: dir, hint: "set HEARTH_HOME to a directory you own" },
    );
  }
  if ((stats.mode & 0o077) !== 0) chmodSync(dir, 0o700);
}

/**
 * Create an empty database file: exclusive, no-follow, 0600. Returns false
 * when the path already exists (another process may have won the race); the
 * caller then inspects it like any existing file.
 */
export function createDatabaseFile(path: string): boolean {
  if (lstatOrNull(path)) return false;
  let fd: number;
  try {
    fd = openSync(
      path,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    );
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw err;
  }
  // This process has no connection to a file it created a moment ago, so
  // closing the descriptor cannot drop any SQLite lock of ours (F2); POSIX
  // locks of other processes are never affected by our close.
  closeSync(fd);
  return true;
}
