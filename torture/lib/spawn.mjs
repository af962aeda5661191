// What the torture run's actors share to start hearth's processes: the
// built CLI and store-worker fixture, the ports a daemon picks for itself,
// and how long a start may take before it counts as blocked.
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));
export const CLI = join(root, "dist/cli/main.js");
export const WORKER = join(root, "test/fixtures/store-worker.mjs");
export const STRAY = join(root, "torture/stray-fd.mjs");
/** Port 0 for every daemon: each picks a free one and says it in its ready line. */
export const DAEMON_PORTS = {
  HEARTH_GATEWAY_PORT: "0",
  HEARTH_DASHBOARD_PORT: "0",
  HEARTH_SCHEDULER_PORT: "0",
};
/** A start that takes longer than this was blocked (by a stale lock or anything else). */
export const START_MS = 30_000;
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
