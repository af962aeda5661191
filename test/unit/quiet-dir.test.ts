import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { QuietDir } from "../../src/files/quiet-dir.js";

// QuietDir on a real directory (os.tmpdir(): ext4 or tmpfs here, both
// trusted). The guard's tests (test/integration/files/ghost-settled.test.ts)
// prove every replacement is still caught; these prove when one stat is
// allowed to stand for the files, and when not.

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "hearth-quiet-"));
  dirs.push(dir);
  return dir;
}

describe("QuietDir", () => {
  it("does not vouch for a change time younger than it can trust", async () => {
    const quiet = new QuietDir(freshDir());
    await sleep(80);
    const seen = quiet.unchanged();
    if (seen === true || seen === undefined) throw new Error("expected a reading");
    // The same reading, as if taken 10 ms after the directory last changed:
    // a change in the same clock tick could keep that time.
    quiet.vouch({ ...seen, at: seen.ctimeMs + 10 });
    expect(quiet.unchanged()).not.toBe(true);
    // Taken when it had settled, it is vouched for.
    quiet.vouch(seen);
    expect(quiet.unchanged()).toBe(true);
  });

  it("answers with one stat once the directory settled, until an entry changes", async () => {
    const dir = freshDir();
    const quiet = new QuietDir(dir);
    await sleep(80);
    const seen = quiet.unchanged();
    expect(seen).not.toBe(true);
    quiet.vouch(seen === true ? undefined : seen);
    expect(quiet.unchanged()).toBe(true);
    writeFileSync(join(dir, "new-entry"), "x");
    expect(quiet.unchanged()).not.toBe(true);
  });

  it("forgets what it vouched for", async () => {
    const quiet = new QuietDir(freshDir());
    await sleep(80);
    const seen = quiet.unchanged();
    quiet.vouch(seen === true ? undefined : seen);
    quiet.forget();
    expect(quiet.unchanged()).not.toBe(true);
  });

  it("never vouches for a directory it cannot stat", () => {
    const dir = freshDir();
    const quiet = new QuietDir(dir);
    rmSync(dir, { recursive: true });
    expect(quiet.unchanged()).toBeUndefined();
  });
});
