import { expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { openStore } from "../../../src/index.js";
import { GroupCommitter } from "../../../src/turn/group-commit.js";
import { createResponder } from "../../../src/turn/responder.js";
import { resumeOrphanedTurns } from "../../../src/turn/resume.js";
import { tempHome } from "../../helpers/home.js";

// The gateway starts its sweep for interrupted turns in the background and
// does not await it. A clean-clone suite run beside a CPU hog saw a gateway
// exit 1 on an unhandled rejection: PostgreSQL ended its connection (the
// test's connection killer) while the sweep asked for owners' presence. The
// sweep's own failure is now a warning, and the process goes on.

it("a sweep whose store fails resolves with a warning instead of rejecting", async () => {
  const home = tempHome();
  const config = loadConfig({ home });
  const store = await openStore({ home });
  await store.close(); // every call now refuses: HEARTH_STORE_CLOSED
  const warned: Record<string, unknown>[] = [];
  const resumed = await resumeOrphanedTurns(
    { profile: "default", store, committer: new GroupCommitter(store, true) },
    { responder: createResponder(config), config, signal: new AbortController().signal },
    { info: () => undefined, warn: (event) => warned.push(event) },
  );
  expect(resumed).toBe(0);
  expect(warned).toEqual([
    expect.objectContaining({ event: "turn.resume_sweep_failed", profile: "default" }),
  ]);
  expect(String(warned[0]!.error)).toMatch(/closed/i);
});
