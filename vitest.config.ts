import { defineConfig } from "vitest/config";
import { LongFirstSequencer } from "./test/helpers/sequencer.js";

// Files that need a process of their own: they arm state a process reads
// once (HEARTH_FAILPOINTS, read at the first failpoint hit), or count what a
// process does that depends on what it did before (maps-batch: a first open
// reads /proc/self/maps anew for a database whose dev:ino a store of this
// process had, and ext4 hands a removed file's inode number to the next file
// at once, so another file's deleted stores can turn the count from 1 to 2).
const OWN_PROCESS = [
  "test/integration/replicate/reshipped.test.ts",
  "test/integration/store-api/maps-batch.test.ts",
];

// Every node process the tests start (~900 CLIs, daemons and fixtures a
// run) would otherwise parse the CA bundle NODE_EXTRA_CA_CERTS names before
// its first line: ~45 ms of CPU each on a machine whose environment sets it
// (`node -e 0` 100 → 60 ms; docs/testing.md). No test leaves loopback. The
// workers and every child they start inherit this process's environment.
delete process.env.NODE_EXTRA_CA_CERTS;

export default defineConfig({
  test: {
    projects: [
      // Files share their worker process (one per worker, not one per
      // file): importing vitest, the helpers and hearth's sources again for
      // every file took a run from 1,192 CPU seconds to 1,568, and from
      // 669 s to 877 (docs/testing.md). setup.ts puts back what a file
      // changes in the process and fails a file that leaves a store open.
      {
        extends: true,
        test: {
          name: "shared",
          include: ["test/**/*.test.ts"],
          exclude: ["**/node_modules/**", ...OWN_PROCESS],
          isolate: false,
        },
      },
      { extends: true, test: { name: "own-process", include: OWN_PROCESS, isolate: true } },
    ],
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
