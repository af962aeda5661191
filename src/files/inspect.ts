import {
  closeSync,
  existsSync,
  fstatSync,
  lstatSync,
  openSync,
  readSync,
  type Stats,
} from "node:fs";
import { dirname } from "node:path";
import { HearthError } from "../errors.js";

/** "HRTH": the application_id every hearth database carries in its header. */
export const HEARTH_APPLICATION_ID = 0x48525448;
export const SIDECAR_SUFFIXES = ["-wal", "-shm", "-journal"] as const;

const MAGIC = Buffer.from("SQLite format 3\0", "latin1");

/** lstat that says "absent" instead of throwing ENOENT. */
export function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
}

/**
 * `dir` when it exists, else its nearest ancestor that does (the root at
 * worst): where a directory not made yet would be made, so the filesystem
 * (its type, its free space) it would be on.
 */
export function nearestExisting(dir: string): string {
  let at = dir;
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  return at;
}

/** A file's identity as hearth's per-process registries key it: "dev:ino". */
export function inodeKey(stats: { dev: number | bigint; ino: number | bigint }): string {
  return `${stats.dev}:${stats.ino}`;
}

/** True when `path`, not followed, is still the file whose inodeKey is `key` (a symlink never is). */
export function stillInode(path: string, key: string): boolean {
  const stats = lstatOrNull(path);
  return stats !== null && !stats.isSymbolicLink() && inodeKey(stats) === key;
}

/**
 * Refuse a database or sidecar path that is a symlink, not a regular file,
 * or owned by someone else. Uses lstat only: no descriptor is opened (F2).
 */
export function assertSafeFile(path: string, stats: Stats): void {
  if (stats.isSymbolicLink()) {
    throw new HearthError("HEARTH_PATH_SYMLINK", `refusing ${path}: it is a symbolic link`, {
      resource: path,
      hint: `replace the link with the real file (mv "$(readlink -f ${path})" ${path}) or point HEARTH_HOME at the real location`,
    });
  }
  if (!stats.isFile()) {
    throw new HearthError(
      "HEARTH_PATH_NOT_REGULAR",
      `refusing ${path}: it is a ${describeType(stats)}, not a regular file`,
      { resource: path, hint: `move ${path} out of the way` },
    );
  }
  const uid = process.getuid?.();
  if (uid !== undefined && stats.uid !== uid) {
    throw new HearthError(
      "HEARTH_PATH_FOREIGN_OWNER",
      `refusing ${path}: it is owned by uid ${stats.uid}, not by this user (uid ${uid})`,
      {
        resource: path,
        hint: `run hearth as uid ${stats.uid}, or chown the file after checking it`,
      },
    );
  }
}

/**
 * The database must have exactly one name. A hard link elsewhere is a
 * second path to the same file, and SQLite gives each path its own -wal
 * and -shm: two processes using the two names would corrupt it.
 */
export function assertSingleName(path: string, stats: Stats): void {
  if (stats.nlink === 1) return;
  throw new HearthError(
    "HEARTH_PATH_HARDLINK",
    `refusing ${path}: it has ${stats.nlink} names (hard links); a process opening it under another name would use another -wal and corrupt it`,
    {
      resource: path,
      hint: `find the other names (find / -xdev -samefile ${path}) and remove them with every hearth process stopped`,
    },
  );
}

/** Check every sidecar that exists; an absent sidecar is fine. */
export function assertSafeSidecars(dbPath: string): void {
  for (const suffix of SIDECAR_SUFFIXES) {
    const path = dbPath + suffix;
    const stats = lstatOrNull(path);
    if (stats) assertSafeFile(path, stats);
  }
}

export interface DatabaseHeader {
  /** A zero-length file: SQLite treats it as a new, empty database. */
  empty: boolean;
  applicationId: number;
  userVersion: number;
  schemaCookie: number;
  /** File format bytes 18/19 are 2 when the database is in WAL mode. */
  wal: boolean;
  /**
   * The file is shorter than the page count its header vouches for (the
   * in-header size is valid when its version-valid-for number matches the
   * change counter). Meaningful only for a quiet store (no -wal): a
   * checkpoint in progress may write page 1 before the pages after it.
   */
  shorterThanHeader: boolean;
}

/**
 * Read the 100-byte SQLite header. This opens and closes a descriptor on the
 * file, so it may only run while this process has no connection to it (F2);
 * the writer registry guarantees that.
 */
export function readHeader(path: string): DatabaseHeader {
  const fd = openSync(path, "r");
  const buffer = Buffer.alloc(100);
  let length: number;
  let size: number;
  try {
    length = readSync(fd, buffer, 0, 100, 0);
    size = fstatSync(fd).size;
  } finally {
    closeSync(fd);
  }
  if (length === 0) {
    return {
      empty: true,
      applicationId: 0,
      userVersion: 0,
      schemaCookie: 0,
      wal: false,
      shorterThanHeader: false,
    };
  }
  if (length < 100 || !buffer.subarray(0, 16).equals(MAGIC)) {
    throw new HearthError("HEARTH_NOT_SQLITE", `refusing ${path}: it is not a SQLite database`, {
      resource: path,
      hint: `move ${path} aside; hearth will create a new store in its place`,
    });
  }
  // A database holds whole pages, at least one: a shorter file was cut off.
  // Refused here, before SQLite opens it (and, in WAL mode, creates -wal and
  // -shm next to it that the refusal would leave behind).
  const raw = buffer.readUInt16BE(16);
  const pageSize = raw === 1 ? 65_536 : raw;
  if (pageSize < 512 || pageSize > 65_536 || (pageSize & (pageSize - 1)) !== 0 || size < pageSize) {
    throw new HearthError(
      "HEARTH_NOT_SQLITE",
      `refusing ${path}: it is not a whole SQLite database (${size} bytes, page size ${raw}): truncated or damaged`,
      {
        resource: path,
        hint: `move ${path} aside and restore a backup (hearth restore), or let hearth create a new store in its place`,
      },
    );
  }
  return {
    empty: false,
    schemaCookie: buffer.readUInt32BE(40),
    userVersion: buffer.readUInt32BE(60),
    applicationId: buffer.readUInt32BE(68),
    wal: buffer[18] === 2,
    shorterThanHeader:
      buffer.readUInt32BE(92) === buffer.readUInt32BE(24) &&
      size < buffer.readUInt32BE(28) * pageSize,
  };
}

/**
 * A SQLite file is ours when it carries our application_id, or when it has
 * never had a schema (an empty database another hearth process is creating).
 */
export function assertOurs(path: string, header: DatabaseHeader): void {
  if (header.empty || header.applicationId === HEARTH_APPLICATION_ID) return;
  if (header.applicationId === 0 && header.schemaCookie === 0) return;
  throw new HearthError(
    "HEARTH_FOREIGN_DATABASE",
    `refusing ${path}: it is a SQLite database that hearth did not create (application_id ${header.applicationId})`,
    { resource: path, hint: `move ${path} aside, or point HEARTH_HOME at another directory` },
  );
}

function describeType(stats: Stats): string {
  if (stats.isDirectory()) return "directory";
  if (stats.isFIFO()) return "FIFO";
  if (stats.isSocket()) return "socket";
  if (stats.isCharacterDevice()) return "character device";
  if (stats.isBlockDevice()) return "block device";
  return "special file";
}
