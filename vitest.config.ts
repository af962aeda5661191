import { defineConfig } from "vitest/config";
import { LongFirstSequencer } from "./test/helpers/sequencer.js";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Two files at a time (the default on 2 cores is one): docs/testing.md.
    // Three made npm test take 440 s instead of ~500, but two of two idle
    // clean-clone runs with three each failed a test (docs/testing.md).
    maxWorkers: 2,
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
