import { afterAll, afterEach, beforeEach } from "vitest";
import { killTestDashboards, stopDashboards } from "./dashboard.js";
import { killFileChildren, killLeftovers, logsOfThisTest, newTest } from "./process.js";
import { scope } from "./scope.js";
import { cleanupFileHomes, cleanupHomes } from "./temp-home.js";

// Loaded into every test file (vitest.config.ts, setupFiles). Its afterEach
// runs after the file's own (vitest runs after-hooks in reverse order), so a
// file closes its stores and servers first; then the children go, and only
// then their homes.

beforeEach((ctx) => {
  scope.inTest = true;
  newTest();
  ctx.onTestFailed(() => {
    const logs = logsOfThisTest();
    if (logs !== "") console.error(`child processes of "${ctx.task.name}":\n${logs}`);
  });
});

afterEach(async () => {
  await Promise.all([killLeftovers(), killTestDashboards()]);
  cleanupHomes();
  scope.inTest = false;
});

// What a file's beforeAll started or made lives until the file is done.
afterAll(async () => {
  await Promise.all([killFileChildren(), stopDashboards()]);
  cleanupFileHomes();
});
