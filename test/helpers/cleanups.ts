// Cleanups a helper module asks for, run by setup.ts after the test or the
// file that is running now. A hook written at a helper module's top level
// would be registered by the first file that imports the module and by no
// other: files share their worker and its module cache (vitest.config.ts,
// isolate false), so a second file's stores would never be closed.

type Cleanup = () => unknown;

const afterTest: Cleanup[] = [];
const afterFile: Cleanup[] = [];

/** Runs `fn` after the test running now (or, from a beforeAll, after its file's first test). */
export function afterThisTest(fn: Cleanup): void {
  afterTest.push(fn);
}

/** Runs `fn` once the file running now is done. */
export function afterThisFile(fn: Cleanup): void {
  afterFile.push(fn);
}

/** Newest first, each awaited. */
async function drain(list: Cleanup[]): Promise<void> {
  for (const fn of list.splice(0).reverse()) await fn();
}

export const runTestCleanups = () => drain(afterTest);
export const runFileCleanups = () => drain(afterFile);
