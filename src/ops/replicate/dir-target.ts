import { randomBytes } from "node:crypto";
import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import { failpoint } from "../../failpoints.js";
import { copyHashed, type Staged, type Target, targetFailed } from "./target.js";

/**
 * A directory target: another disk or a mount. An object is written to a
 * hidden staging name, fsynced, renamed into place and its directory
 * fsynced, so a crash leaves it whole or absent (a staging file at worst,
 * which listing skips).
 */
export class DirTarget implements Target {
  readonly where: string;

  constructor(
    readonly name: string,
    private readonly root: string,
  ) {
    this.where = root;
  }

  async put(key: string, data: Buffer): Promise<void> {
    const path = this.path(key);
    const staging = join(dirname(path), `.put-${process.pid}-${randomBytes(4).toString("hex")}`);
    try {
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      const file = await open(staging, "wx", 0o600);
      try {
        await file.writeFile(data);
        await file.sync();
      } finally {
        await file.close();
      }
      failpoint("replicate.mid-put");
      await rename(staging, path);
      await syncDir(dirname(path));
    } catch (err) {
      await rm(staging, { force: true }).catch(() => {});
      throw targetFailed(this, `writing ${key}`, err);
    }
  }

  async stage(file: string): Promise<Staged> {
    const staging = join(this.root, `.stage-${process.pid}-${randomBytes(4).toString("hex")}`);
    try {
      await mkdir(this.root, { recursive: true, mode: 0o700 });
      const { sha, bytes } = await copyHashed(file, staging);
      return {
        sha,
        bytes,
        publish: async (key) => {
          const path = this.path(key);
          try {
            await mkdir(dirname(path), { recursive: true, mode: 0o700 });
            failpoint("replicate.mid-put");
            await rename(staging, path);
            await syncDir(dirname(path));
          } catch (err) {
            await rm(staging, { force: true }).catch(() => {});
            throw targetFailed(this, `writing ${key}`, err);
          }
        },
        discard: () => rm(staging, { force: true }),
      };
    } catch (err) {
      await rm(staging, { force: true }).catch(() => {});
      throw targetFailed(this, `copying ${file}`, err);
    }
  }

  async get(key: string): Promise<Buffer> {
    try {
      return await readFile(this.path(key));
    } catch (err) {
      throw targetFailed(this, `reading ${key}`, err);
    }
  }

  async list(prefix: string): Promise<string[]> {
    const dir = this.path(prefix);
    let names: string[];
    try {
      names = await readdir(dir, { recursive: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw targetFailed(this, `listing ${prefix}`, err);
    }
    return names
      .filter((n) => !n.split(sep).some((part) => part.startsWith(".")))
      .map((n) => relative(this.root, join(dir, n)).split(sep).join("/"))
      .filter((k) => /\.(db|walz?|json)$/.test(k));
  }

  async remove(keys: string[]): Promise<void> {
    try {
      for (const key of keys) await rm(this.path(key), { force: true });
    } catch (err) {
      throw targetFailed(this, "removing old objects", err);
    }
  }

  private path(key: string): string {
    if (key.split("/").some((part) => part === ".." || part.startsWith(".")))
      throw new Error(`refusing object key ${key}`);
    return join(this.root, ...key.split("/"));
  }
}

async function syncDir(path: string): Promise<void> {
  const dir = await open(path, "r");
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
