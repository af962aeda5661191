import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Everything observable about a directory tree: names, types, modes, owners,
 * inodes, link counts, sizes, mtimes and bytes, recursively. A refusal must
 * leave it equal. `ignore`: entry names left out at every level. The one
 * exception: a `-shm` file's mtime. SQLite's shared-memory index is written
 * through a memory map by every reader that takes a read mark, so a command
 * that only reads (and then refuses) moves its mtime; its bytes are still
 * compared.
 */
export function snapshot(dir: string, ignore: readonly string[] = []): unknown {
  return readdirSync(dir)
    .filter((name) => !ignore.includes(name))
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
        bytes: st.isFile() ? readFileSync(path).toString("base64") : null,
        children: st.isDirectory() ? snapshot(path, ignore) : null,
      };
    });
}
