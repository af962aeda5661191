import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { scope } from "./scope.js";

// Temp homes and their cleanup, without the store: setup.ts (loaded before
// every test file) imports this, so a file that never opens a store does
// not load the store's modules (home.ts re-exports these).

const homes: string[] = [];
const fileHomes: string[] = [];

/**
 * A fresh temp directory to use as a hearth home (under `base`, the OS's
 * temp directory unless given). Made in a test, it is removed after that
 * test; made in a beforeAll, after the file (setup.ts).
 */
export function tempHome(base = tmpdir()): string {
  const dir = mkdtempSync(join(base, "hearth-test-"));
  (scope.inTest ? homes : fileHomes).push(dir);
  return join(dir, "home");
}

/** Remove the homes made by the test that just ran. */
export function cleanupHomes(): void {
  for (const dir of homes.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Remove the homes a file's beforeAll made. */
export function cleanupFileHomes(): void {
  for (const dir of fileHomes.splice(0)) rmSync(dir, { recursive: true, force: true });
}
