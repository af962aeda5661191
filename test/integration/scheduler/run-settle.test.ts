import { renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { jobSchema } from "../../../src/config/scheduler.js";
import { openStore } from "../../../src/index.js";
import { launchJob } from "../../../src/ops/jobs/launch.js";
import { ProfileAccess } from "../../../src/scheduler/profile-access.js";
import type { JobRun } from "../../../src/store/runs.js";
import { runCli } from "../../helpers/cli.js";
import { tempHome } from "../../helpers/home.js";
import { isRunning, until } from "../../helpers/process.js";

const CLI = fileURLToPath(new URL("../../../dist/cli/main.js", import.meta.url));

// The store is replaced while a run's worker works (a repair's or a
// window's promote renames a new file over state.db). The launcher's
// connection, shared with other bookkeeping of its profile, still holds the
// old file: the run's finish failed HEARTH_GENERATION_CHANGED, and the run
// stayed `running` in the new file for as long as its launcher lived (the
// torture's seed 41: "t-delete-empty running" after the fleet stopped).
describe("a run whose store was replaced while its worker ran", () => {
  it("is finished in the current file, not left running", async () => {
    const home = tempHome();
    const seed = await openStore({ home });
    await seed.sessions.create({ title: "kept" });
    await seed.close();
    const access = new ProfileAccess(home, ["default"]);
    // Other bookkeeping of the profile keeps a connection open meanwhile.
    let letGo: (() => void) | undefined;
    const held = access.open(
      "default",
      () =>
        new Promise<void>((resolve) => {
          letGo = resolve;
        }),
    );
    await until("the bookkeeping holds the store", () => letGo !== undefined);
    let worker = 0;
    const report = launchJob({
      home,
      profile: "default",
      job: jobSchema().parse({
        name: "slow",
        schedule: "0 0 1 1 *",
        kind: "command",
        command: "sleep 3",
      }),
      trigger: "manual",
      scheduledAt: Date.now(),
      worker: { command: process.execPath, args: [CLI] },
      withStore: (fn) => access.open("default", fn),
      onEvent: (event, fields) => {
        if (event === "run.started") worker = Number(fields.pid);
      },
    });
    report.catch(() => undefined); // awaited below; not unhandled meanwhile
    await until("the worker was let go", () => worker > 0, 30_000);
    // A copy holding every row (the running one too), renamed over the store.
    const backup = await runCli(["--json", "backup"], { home });
    expect(backup.code, backup.stderr).toBe(0);
    const copy = JSON.parse(backup.stdout).path as string;
    const db = join(home, "state.db");
    for (const suffix of ["-wal", "-shm"]) rmSync(db + suffix, { force: true });
    renameSync(copy, db);

    // The bookkeeping ends a moment after the worker: the launcher's finish
    // meets the old connection first (the old -shm still mapped here).
    await until("the worker exited", () => !isRunning(worker), 30_000);
    await new Promise((r) => setTimeout(r, 1000));
    letGo!();
    await held.catch(() => undefined);
    const r = await report;
    expect(r.outcome, r.note ?? "").toBe("ok");
    const listed = await runCli(["--json", "cron", "runs"], { home });
    const runs = JSON.parse(listed.stdout).runs as JobRun[];
    expect(runs.find((x) => x.id === r.id)).toMatchObject({ outcome: "ok", exitCode: 0 });
  });
});
