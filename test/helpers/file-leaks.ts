import { readFileSync } from "node:fs";

// What a test file must not leave behind in the worker process. Files share
// their worker (vitest.config.ts: isolate false), so a file's leftovers meet
// the files after it: an environment variable it set reaches their code and
// their children, and a store it left open keeps its -shm mapped after the
// home is removed. Such a mapping is worse than a leak: a later file's new
// database can get the removed file's inode, and hearth rightly refuses it
// (removed-index.ts), a failure far from its cause. setup.ts restores the
// environment and fails the file that left a mapping, naming it.

/** process.env as the file found it, to put back after it. */
export function environmentAtStart(): () => void {
  const saved = { ...process.env };
  return () => {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    for (const [key, value] of Object.entries(saved))
      if (process.env[key] !== value) process.env[key] = value;
  };
}

/** The SQLite shared-memory indexes (-shm files) this process maps now. */
export function mappedIndexes(): string[] {
  const paths = new Set<string>();
  for (const line of readFileSync("/proc/self/maps", "utf8").split("\n")) {
    const at = line.indexOf("/");
    if (at === -1) continue;
    const path = line.slice(at).replace(/ \(deleted\)$/, "");
    if (path.endsWith("-shm")) paths.add(line.slice(at));
  }
  return [...paths];
}

/**
 * Resolves once every -shm mapped now but not in `before` (what the file
 * found mapped) is unmapped: a closed store's reader threads unmap theirs
 * as they end. Throws naming the ones still mapped after `ms`.
 */
export async function noIndexLeftMapped(before: string[], ms = 5_000): Promise<void> {
  const found = new Set(before);
  const left = () => mappedIndexes().filter((path) => !found.has(path));
  const deadline = Date.now() + ms;
  let still = left();
  while (still.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    still = left();
  }
  if (still.length > 0)
    throw new Error(
      `this file left ${still.length} SQLite index(es) mapped after its tests, a store or connection it never closed: ${still.join(", ")}. Close it in the test or its afterAll.`,
    );
}
