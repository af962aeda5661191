import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const homes: string[] = [];

/** A fresh temp directory to use as a hearth home; removed by cleanupHomes(). */
export function tempHome(): string {
  const dir = mkdtempSync(join(tmpdir(), "hearth-test-"));
  homes.push(dir);
  return join(dir, "home");
}

export function cleanupHomes(): void {
  for (const dir of homes.splice(0)) rmSync(dir, { recursive: true, force: true });
}
