import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { openStore, readHolders } from "../../../src/index.js";
import { tempHome } from "../../helpers/home.js";
import { spawnNode } from "../../helpers/process.js";
import { startWorker } from "../../helpers/worker.js";

const HOLDER = fileURLToPath(new URL("../../fixtures/ofd-holder.mjs", import.meta.url));

// In a rollback-journal store hearth takes no guard locks, so an OFD lock
// on SQLite's range can only be someone else's. Counting it against the
// hearth processes present would hide that holder from structural checks.
it("names a foreign OFD holder of a rollback-journal store even while hearth processes hold it", async () => {
  const home = tempHome();
  const setup = await openStore({ home, config: { durability: { journalMode: "delete" } } });
  const path = setup.path;
  await setup.close();
  const reader = await startWorker({ HEARTH_PROCESS_KIND: "dashboard" });
  await reader.call("open", {
    home,
    role: "reader",
    config: { durability: { journalMode: "delete" } },
  });

  const foreign = spawnNode([HOLDER, path]);
  await foreign.line((l) => l === "ready", "ready");

  const report = readHolders(path, { ghosts: false });
  const pids = report.holders.map((h) => h.pid);
  expect(pids).toContain(reader.pid);
  expect(report.holders.find((h) => h.pid === foreign.pid)).toMatchObject({
    kind: "unknown",
    roles: [],
  });
  expect(report.unexplainedLocks).toBe(0);
});
