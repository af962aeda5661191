import { defineConfig } from "vitest/config";
import { LongFirstSequencer } from "./test/helpers/sequencer.js";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Three files at a time on 2 CPUs (the default is one): most files
    // wait on child processes, fsyncs and a browser, not on a CPU. Two took
    // npm test 453-485 s idle; three 440 s at b42666a. The two failures
    // three caused there were tests assuming a quiet machine (fixed:
    // docs/testing.md, "Beside a CPU hog").
    maxWorkers: 3,
    // Rebuilds dist/ (which child processes run) when src/ is newer, and
    // starts an embedded PostgreSQL when no server answers (docs/testing.md).
    globalSetup: ["test/helpers/global-setup.ts"],
    // Kills the children a test left running; shows their stderr when it failed.
    setupFiles: ["test/helpers/setup.ts"],
    // Gateways started by tests pick a free port (children inherit it).
    env: { HEARTH_GATEWAY_PORT: "0", HEARTH_DASHBOARD_PORT: "0", HEARTH_SCHEDULER_PORT: "0" },
    reporters: ["default"],
    // The longest kinds of file first, so that none runs alone at the end.
    sequence: { sequencer: LongFirstSequencer },
  },
});
