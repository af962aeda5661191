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

type Ctx = { skip(note?: string): void };

/** Mount a tmpfs of `size` (e.g. "4m") on `dir` (made 0700 when missing); skips the test when it cannot. */
export function mountSmallDisk(dir: string, size: string, ctx: Ctx): void {
  mountOrSkip(dir, `a ${size} tmpfs (needs root or CAP_SYS_ADMIN)`, ctx, [
    ["mount", "-t", "tmpfs", "-o", `size=${size},mode=0700`, "tmpfs", dir],
  ]);
}

/**
 * Mount an ext4 filesystem of `mib` MiB (no blocks reserved for root, no
 * lost+found) on `dir` (made 0700), from an image file `image` outside it;
 * skips the test when it cannot.
 */
export function mountSmallExt4(dir: string, mib: number, image: string, ctx: Ctx): void {
  mountOrSkip(dir, `a ${mib} MiB ext4 image (needs mkfs.ext4 and root)`, ctx, [
    ["truncate", "-s", `${mib}M`, image],
    ["mkfs.ext4", "-q", "-m", "0", image],
    ["mount", "-o", "loop", image, dir],
  ]);
  execFileSync("chmod", ["0700", dir]);
  rmdirSync(join(dir, "lost+found"));
}

/** Run the commands that mount something on `dir` (made 0700 when missing), or skip the test. */
function mountOrSkip(dir: string, what: string, ctx: Ctx, commands: string[][]): void {
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    for (const [command, ...args] of commands) execFileSync(command!, args, { stdio: "pipe" });
  } catch (err) {
    ctx.skip(`cannot mount ${what}: ${String(err)}`);
  }
  mounts.push(dir);
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
