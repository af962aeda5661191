import { statfsSync } from "node:fs";
import { HearthError } from "../errors.js";
import { nearestExisting } from "../files/inspect.js";

/**
 * Admission for a copy of `bytes` into `dir`: proportional (the copy plus a
 * tenth of it plus 16 MiB of headroom), and fail closed: when free space
 * cannot be read, the answer is no. A `dir` not created yet (a dry run
 * creates nothing) is measured at its nearest existing ancestor, the
 * filesystem it would be created on.
 */
export function assertSpaceFor(dir: string, bytes: number, doing: string): void {
  const needed = Math.ceil(bytes * 1.1) + 16 * 1048576;
  let free: number;
  try {
    const fs = statfsSync(nearestExisting(dir));
    free = fs.bavail * fs.bsize;
  } catch (err) {
    throw new HearthError(
      "HEARTH_NO_SPACE",
      `refusing to ${doing}: free space in ${dir} cannot be read (${String(err)})`,
      {
        resource: dir,
        cause: err,
        hint: "check that the directory exists and is on a mounted filesystem",
        details: { situation: "admission" },
      },
    );
  }
  if (!Number.isFinite(free) || free < needed) {
    const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;
    throw new HearthError(
      "HEARTH_NO_SPACE",
      `refusing to ${doing}: it needs ${mib(needed)} in ${dir} and ${mib(free)} is free`,
      {
        resource: dir,
        hint: "free disk space (or remove old backups) and run it again; nothing was written",
        details: { situation: "admission" },
      },
    );
  }
}
