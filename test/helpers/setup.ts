import { afterAll, afterEach, beforeEach, vi } from "vitest";
import { runFileCleanups, runTestCleanups } from "./cleanups.js";
import { killTestDashboards, stopDashboards } from "./dashboard.js";
import { environmentAtStart, mappedIndexes, noIndexLeftMapped } from "./file-leaks.js";
import { killFileChildren, killLeftovers, logsOfThisTest, newTest } from "./process.js";
import { scope } from "./scope.js";
import { cleanupFileHomes, cleanupHomes } from "./temp-home.js";

// Loaded into every test file (vitest.config.ts, setupFiles). Its afterEach
// runs after the file's own (vitest runs after-hooks in reverse order), so a
// file closes its stores and servers first; then the children go, and only
// then their homes.
// Files share their worker process (vitest.config.ts, isolate false): this
// module runs again before each file, so its hooks are every file's. They
// run the cleanups helper modules asked for (cleanups.ts), put back what a
// file changed in the process, and fail a file that left a store open
// (file-leaks.ts).

const restoreEnvironment = environmentAtStart();
const mappedAtStart = mappedIndexes();

beforeEach((ctx) => {
  scope.inTest = true;
  newTest();
  ctx.onTestFailed(() => {
    const logs = logsOfThisTest();
    if (logs !== "") console.error(`child processes of "${ctx.task.name}":\n${logs}`);
  });
});

afterEach(async () => {
  await runTestCleanups();
  await Promise.all([killLeftovers(), killTestDashboards()]);
  cleanupHomes();
  scope.inTest = false;
});

// What a file's beforeAll started or made lives until the file is done.
afterAll(async () => {
  await runFileCleanups();
  await Promise.all([killFileChildren(), stopDashboards()]);
  cleanupFileHomes();
  vi.useRealTimers();
  vi.restoreAllMocks();
  restoreEnvironment();
  await noIndexLeftMapped(mappedAtStart);
}, 180_000);
