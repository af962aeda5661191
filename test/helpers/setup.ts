import { afterEach, beforeEach } from "vitest";
import { cleanupHomes } from "./home.js";
import { killLeftovers, logsOfThisTest, newTest } from "./process.js";

// Loaded into every test file (vitest.config.ts, setupFiles). Its afterEach
// runs after the file's own (vitest runs after-hooks in reverse order), so a
// file closes its stores and servers first; then the children go, and only
// then their homes.

beforeEach((ctx) => {
  newTest();
  ctx.onTestFailed(() => {
    const logs = logsOfThisTest();
    if (logs !== "") console.error(`child processes of "${ctx.task.name}":\n${logs}`);
  });
});

afterEach(async () => {
  await killLeftovers();
  cleanupHomes();
});
