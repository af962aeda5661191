import { type Stats, statfsSync, statSync } from "node:fs";
import { dirChangeTimeTrusted } from "./fs-type.js";

/**
 * A change time this many milliseconds older than the moment it was read
 * cannot be taken again by a later change: with coarse timestamps a change
 * takes the current clock tick (a few milliseconds at most), and a later
 * one a later tick.
 */
const SETTLED_MS = 50;

interface Seen {
  dev: number;
  ino: number;
  ctimeMs: number;
  /** Date.now() when it was read (the clock ctime is stamped from). */
  at: number;
}

/**
 * The directory a store's files live in, as one stat of its path sees it:
 * the same directory still at that path, and no entry in it created,
 * unlinked or renamed since a moment when everything in it was known good
 * (FileGuard.check). Then none of the store's files lost its name or was
 * replaced, and one stat answers for three. Whenever that cannot be told
 * (another filesystem, a directory changed, a change time too fresh to
 * trust, a failed stat), `unchanged()` is false and the guard checks each
 * file. Trusted filesystems: dirChangeTimeTrusted (src/files/fs-type.ts).
 *
 * The directory's change time is read, never a file's: reading a file's
 * timestamps makes its next write stamp a fine-grained time on Linux 6.13
 * and later (the -wal's inode would turn dirty at every commit, see
 * FileGuard); a directory takes writes only when its entries change.
 */
export class QuietDir {
  private readonly usable: boolean;
  /** The directory the store's files were opened in (read before they were). */
  private readonly origin: Seen | undefined;
  private known: Seen | undefined;

  constructor(readonly path: string) {
    let usable = false;
    try {
      usable = dirChangeTimeTrusted(statfsSync(path).type);
    } catch {
      // cannot tell the filesystem: every check looks at each file
    }
    this.usable = usable;
    this.origin = this.look();
  }

  /** Read the directory now, before the files are checked one by one (the reading `vouch` takes). */
  look(): Seen | undefined {
    if (!this.usable) return undefined;
    let stats: Stats | undefined;
    try {
      stats = statSync(this.path, { throwIfNoEntry: false });
    } catch {
      return undefined;
    }
    if (!stats?.isDirectory()) return undefined;
    return { dev: stats.dev, ino: stats.ino, ctimeMs: stats.ctimeMs, at: Date.now() };
  }

  /**
   * Every file was found good after `seen` was read: from now on a reading
   * equal to it stands for them, when it is of the directory the files
   * were opened in and its change time had settled when it was read.
   */
  vouch(seen: Seen | undefined): void {
    const origin = this.origin;
    const same = origin && seen && seen.dev === origin.dev && seen.ino === origin.ino;
    this.known = same && seen.at - seen.ctimeMs >= SETTLED_MS ? seen : undefined;
  }

  /** Forget the vouched reading (a file was found gone). */
  forget(): void {
    this.known = undefined;
  }

  /**
   * True when the directory at `path` is the one vouched for and unchanged
   * since; else the reading taken (for the checks by file, then `vouch`).
   */
  unchanged(): true | Seen | undefined {
    const known = this.known;
    const now = this.look();
    if (
      known &&
      now &&
      now.dev === known.dev &&
      now.ino === known.ino &&
      now.ctimeMs === known.ctimeMs
    ) {
      return true;
    }
    return now;
  }
}
