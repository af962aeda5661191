/**
 * A full disk as HEARTH_NO_SPACE: which situation it stopped (a write, an
 * open, a copy's admission, a backup), the message naming the filesystem
 * and its free space, and the check that an I/O error was the full disk.
 */
import { statfsSync } from "node:fs";
import { dirname } from "node:path";
import { HearthError } from "./errors.js";

/**
 * The situations HEARTH_NO_SPACE stands for (`details.situation`), each with
 * the text an HTTP client may see (no path): the code is shared, the
 * message says which one happened.
 */
export const NO_SPACE_SITUATIONS = {
  write:
    "the disk holding the store is full: this write was not stored (nothing acknowledged before it is lost); writes resume by themselves once space is freed",
  open: "the disk holding the store is full: the store cannot be opened until space is freed",
  admission: "not enough free space for the copy the command must write first; nothing was written",
  copy: "the disk a backup was written to filled up: the backup did not complete; the store is untouched and its writes go on",
} as const;

export type NoSpaceSituation = keyof typeof NO_SPACE_SITUATIONS;

/** Below this much free space (for this user) an I/O error on a disk is taken to be the full disk. */
const FULL_BELOW_BYTES = 1048576;

/**
 * HEARTH_NO_SPACE for a full disk: `path` is the store (write, open) or the
 * directory a copy was written into (copy); the message names its
 * filesystem and the free space.
 */
export function noSpaceError(
  situation: Exclude<NoSpaceSituation, "admission">,
  path: string,
  cause: unknown,
): HearthError {
  const dir = situation === "copy" ? path : dirname(path);
  const free = freeSpace(dir);
  const [message, hint] =
    situation === "write"
      ? [
          `the disk holding ${path} is full${free}: this write was not stored, and nothing acknowledged before it is lost`,
          `free space on the filesystem of ${path} (df -h ${dir}); writes resume by themselves`,
        ]
      : situation === "open"
        ? [
            `cannot open ${path}: the disk holding it is full${free}; nothing was changed`,
            `free space on the filesystem of ${path} (df -h ${dir}), then start again`,
          ]
        : [
            `the disk holding ${path} filled up while a backup was written into it${free}: the backup did not complete; the store is untouched and its writes go on`,
            `free space in ${path} (df -h ${path}; remove old backups), then run the backup again`,
          ];
  return new HearthError("HEARTH_NO_SPACE", message, {
    resource: path,
    cause,
    hint,
    details: { situation },
  });
}

/** True when the filesystem of the directory `dir` has less than 1 MiB free for this user. */
export function diskIsFull(dir: string): boolean {
  try {
    const fs = statfsSync(dir);
    return fs.bavail * fs.bsize < FULL_BELOW_BYTES;
  } catch {
    return false;
  }
}

/** " (N bytes free)" for the filesystem of the directory `dir`, or "" when it cannot be read. */
function freeSpace(dir: string): string {
  try {
    const fs = statfsSync(dir);
    return ` (${fs.bavail * fs.bsize} bytes free)`;
  } catch {
    return "";
  }
}
