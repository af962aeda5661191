import { defineConfig } from "vitest/config";
import { LongFirstSequencer } from "./test/helpers/sequencer.js";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Three files at a time (the default on 2 cores is one): most of a
    // file's time is spent waiting for the processes it starts, so a third
    // file uses CPU the other two leave idle (docs/testing.md).
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
