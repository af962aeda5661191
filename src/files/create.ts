import { chmodSync, closeSync, constants, mkdirSync, openSync, statSync } from "node:fs";
import { HearthError } from "../errors.js";
import { isRecognisedHearthDir } from "./hearth-home.js";
import { lstatOrNull } from "./inspect.js";

/**
 * Make sure a hearth directory exists, is a directory we own, and is 0700.
 * A symlinked home is followed (operators move homes to other disks); the
 * database files inside are never followed. Permissions are tightened only
 * on a directory hearth created or one that already holds a hearth home
 * (S1): any other directory others can reach is refused, named, and left
 * as it was (`--home /`, a shared sticky directory).
 */
export function ensurePrivateDir(dir: string): void {
  const created = mkdirSync(dir, { recursive: true, mode: 0o700 }) !== undefined;
  const stats = statSync(dir);
  const uid = process.getuid?.();
  if (!stats.isDirectory() || (uid !== undefined && stats.uid !== uid)) {
    throw new HearthError(
      "HEARTH_PATH_UNSAFE_HOME",
      `refusing ${dir}: ${stats.isDirectory() ? `owned by uid ${stats.uid}` : "not a directory"}`,
      { resource: dir, hint: "set HEARTH_HOME to a directory you own" },
    );
  }
  if ((stats.mode & 0o077) === 0) return;
  if (!created && !isRecognisedHearthDir(dir)) {
    const mode = (stats.mode & 0o7777).toString(8).padStart(4, "0");
    throw new HearthError(
      "HEARTH_PATH_UNSAFE_HOME",
      `refusing ${dir}: others can reach it (mode ${mode}) and hearth cannot tell it is a hearth home (no config.json of hearth's sections, no store of its own open there); hearth changes the permissions only of directories it created or recognises as its own, and left this one as it was`,
      {
        resource: dir,
        hint: `point --home (or HEARTH_HOME) at a new directory, which hearth creates 0700; or, if ${dir} is meant to be a private hearth home: chmod 700 ${dir}`,
      },
    );
  }
  chmodSync(dir, 0o700);
}

/** Create `path` for writing: exclusive (it must not exist), never through a symbolic link, 0600. */
export function openExclusive(path: string): number {
  return openSync(
    path,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
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
    fd = openExclusive(path);
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
