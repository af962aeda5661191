import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface SnapshotOptions {
  /** Entry names left out at every level. */
  ignore?: readonly string[];
  /**
   * Treat an empty `-wal` and its `-shm` as absent. In WAL mode any reader
   * creates both (SQLite needs the shared-memory index to read at all) and
   * the last writer to close removes both after its checkpoint; while the
   * log is empty neither holds a byte of the database. A test that runs
   * many commands, some of them writers that succeed, compares refusals
   * with this on: a refusal may not change the database or a non-empty log,
   * but may open it to read.
   */
  idleSidecars?: boolean;
}

/**
 * Everything observable about a directory tree: names, types, modes, owners,
 * inodes, link counts, sizes, mtimes and bytes, recursively. A refusal must
 * leave it equal. The one exception: a `-shm` file's mtime and bytes (its
 * name, inode, mode, owner and size are still compared). SQLite's
 * shared-memory index holds no byte of the database: it is an index of the
 * `-wal`, written through a memory map by every reader that takes a read
 * mark, and rebuilt from the log by the first connection to open after the
 * last one closed without a checkpoint (a reader closing last cannot take
 * one). So a command that only reads, then refuses, may rewrite it; the
 * database and the log beside it are still compared byte for byte.
 */
export function snapshot(dir: string, options: SnapshotOptions | readonly string[] = {}): unknown {
  const { ignore = [], idleSidecars = false } = Array.isArray(options)
    ? { ignore: options as readonly string[] }
    : (options as SnapshotOptions);
  const names = readdirSync(dir).filter((name) => !ignore.includes(name));
  const idle = (db: string): boolean => {
    const wal = join(dir, `${db}-wal`);
    try {
      return lstatSync(wal).size === 0;
    } catch {
      return true;
    }
  };
  return names
    .filter((name) => {
      if (!idleSidecars) return true;
      if (name.endsWith("-wal")) return !idle(name.slice(0, -4));
      if (name.endsWith("-shm")) return !idle(name.slice(0, -4));
      return true;
    })
    .sort()
    .map((name) => {
      const path = join(dir, name);
      const st = lstatSync(path);
      return {
        name,
        mode: st.mode,
        uid: st.uid,
        ino: st.ino,
        nlink: st.nlink,
        size: st.size,
        mtimeMs: name.endsWith("-shm") ? null : st.mtimeMs,
        bytes: st.isFile() && !name.endsWith("-shm") ? readFileSync(path).toString("base64") : null,
        children: st.isDirectory() ? snapshot(path, { ignore, idleSidecars }) : null,
      };
    });
}
