import { execFileSync } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, rmdirSync, writeSync } from "node:fs";
import { join } from "node:path";

/**
 * Small real filesystems for full-disk tests: a tmpfs of a few MiB, or an
 * ext4 image on a loop device (where SQLite's failures on a full disk are a
 * disk's, not memory's: a failed copy leaves its -journal), mounted on a
 * directory (needs root or CAP_SYS_ADMIN; the test is skipped otherwise),
 * filled to the last block by a file, unmounted after the test.
 */
const mounts: string[] = [];

/** Mount a tmpfs of `size` (e.g. "4m") on `dir` (made 0700 when missing); skips the test when it cannot. */
export function mountSmallDisk(
  dir: string,
  size: string,
  ctx: { skip(note?: string): void },
): void {
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size},mode=0700`, "tmpfs", dir], {
      stdio: "pipe",
    });
  } catch (err) {
    ctx.skip(`cannot mount a ${size} tmpfs (needs root or CAP_SYS_ADMIN): ${String(err)}`);
  }
  mounts.push(dir);
}

/**
 * Mount an ext4 filesystem of `mib` MiB (no blocks reserved for root, no
 * lost+found) on `dir` (made 0700), from an image file `image` outside it;
 * skips the test when it cannot.
 */
export function mountSmallExt4(
  dir: string,
  mib: number,
  image: string,
  ctx: { skip(note?: string): void },
): void {
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    execFileSync("truncate", ["-s", `${mib}M`, image], { stdio: "pipe" });
    execFileSync("mkfs.ext4", ["-q", "-m", "0", image], { stdio: "pipe" });
    execFileSync("mount", ["-o", "loop", image, dir], { stdio: "pipe" });
  } catch (err) {
    ctx.skip(`cannot mount a ${mib} MiB ext4 image (needs mkfs.ext4 and root): ${String(err)}`);
  }
  mounts.push(dir);
  execFileSync("chmod", ["0700", dir]);
  rmdirSync(`${dir}/lost+found`);
}

/** Unmount what mountSmallDisk and mountSmallExt4 mounted (call it in afterEach). */
export function unmountSmallDisks(): void {
  for (const dir of mounts.splice(0)) execFileSync("umount", ["-l", dir], { stdio: "pipe" });
}

/** Fill the filesystem of `dir` to the last block with a file; returns the file (remove it to free the space). */
export function fillDisk(dir: string, name = "filler"): string {
  const filler = join(dir, name);
  const fd = openSync(filler, "w");
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch {
    // ENOSPC at 64 KiB; now the last blocks
  }
  try {
    for (;;) writeSync(fd, chunk, 0, 512);
  } catch {
    // full
  } finally {
    closeSync(fd);
  }
  return filler;
}
