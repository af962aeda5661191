import { afterEach, describe, expect, it } from "vitest";
import { databasePath, profileDir } from "../../../src/config/paths.js";
import { createDatabaseFile, ensurePrivateDir } from "../../../src/files/create.js";
import { runCli } from "../../helpers/cli.js";
import { spawnDashboard, stopDashboards } from "../../helpers/dashboard.js";
import { tempHome } from "../../helpers/home.js";

// hearth start on a new home starts the gateway, the dashboard and the
// scheduler at once: one of them creates the store while another opens it.
// A reader that found the file before its schema (user_version 0: the
// instant between the file's creation and the first migration's commit)
// exited 1 with HEARTH_SCHEMA_OUTDATED ("version 0; this build reads
// version N"), seen in a loaded CI run. A store being created is no store
// yet: the dashboard then creates it (or waits for its creation) through a
// writer of its own. The instant is made to last here: the file is created
// as a writer creates it, and nothing migrates it.

afterEach(stopDashboards);

function fileBeforeItsSchema(home: string): string {
  ensurePrivateDir(home);
  ensurePrivateDir(profileDir(home, "default"));
  const path = databasePath(home, "default");
  createDatabaseFile(path);
  return path;
}

describe("a store file found before its schema (another process creating it)", () => {
  it("is no store yet: the dashboard creates it through a writer and serves", async () => {
    const home = tempHome();
    fileBeforeItsSchema(home);
    const dashboard = spawnDashboard(home);
    await dashboard.ready; // rejects if it exits (it exited 1 with HEARTH_SCHEMA_OUTDATED)
    await dashboard.kill("SIGTERM");
  });

  it("is HEARTH_STORE_NOT_FOUND for a reading command, not an outdated schema", async () => {
    const home = tempHome();
    fileBeforeItsSchema(home);
    const result = await runCli(["--json", "sessions", "list"], { home });
    // As for a profile nothing has written yet: a reader creates nothing.
    expect(result.stderr).toContain("HEARTH_STORE_NOT_FOUND");
    expect(result.stderr).not.toContain("HEARTH_SCHEMA_OUTDATED");
  });
});
