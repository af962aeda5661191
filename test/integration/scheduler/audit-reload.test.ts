// The scheduler's reload of config.json (hearth cron add edits it) is in
// each profile's audit trail (docs/security.md#audit-trail); a config.json
// it refuses is logged only (no store opens on an invalid configuration).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { withStore } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { until } from "../../helpers/process.js";
import { startScheduler, writeJobs } from "../../helpers/scheduler.js";

/** action/outcome of the trail, read from the file (config.json may be invalid: no openStore). */
function trail(path: string): { action: string; outcome: string; via: string }[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare("SELECT action, outcome, via FROM audit_log ORDER BY id").all() as {
      action: string;
      outcome: string;
      via: string;
    }[];
  } finally {
    db.close();
  }
}

describe("scheduler config reload audit", () => {
  it("records a reload via scheduler; a refused config.json records nothing", async () => {
    const home = tempHome();
    writeJobs(home, []);
    const scheduler = await startScheduler(home);
    const path = await withStore(home, async (s) => s.path);
    writeJobs(home, [{ name: "reap", schedule: "0 3 * * *", kind: "reap-idle" }]);
    await until("the reload recorded", () => trail(path).length === 1);
    writeFileSync(join(home, "config.json"), JSON.stringify({ scheduler: { nonsense: 1 } }));
    await until("the refusal logged", () => scheduler.logs("config.invalid").length === 1);
    writeJobs(home, []);
    await until("the next reload recorded", () => trail(path).length === 2);
    expect(trail(path)).toEqual([
      { action: "config.reload", outcome: "ok", via: "scheduler" },
      { action: "config.reload", outcome: "ok", via: "scheduler" },
    ]);
  });
});
