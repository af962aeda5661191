// The scheduled maintenance jobs reach the profile's backend through the
// ops seam (src/ops/backend.ts): on a PostgreSQL profile a worker's backup
// is a verified pg_dump and its doctor is PostgreSQL's diagnosis. Before the
// seam both ran the SQLite op: backup failed with HEARTH_UNSUPPORTED_BACKEND
// and doctor reported "ok" with store_missing.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../../helpers/cli.js";
import { pgEnabled, pgToolsFound } from "../../helpers/pg.js";
import { cliEnv, filledDatabase, pgHome } from "./helpers.js";

function result(stdout: string): Record<string, unknown> {
  const line = stdout.split("\n").find((l) => l.includes('"worker.result"'));
  if (!line) throw new Error(`no worker.result line in ${stdout}`);
  return JSON.parse(line);
}

describe.skipIf(!pgEnabled)("scheduled jobs on a PostgreSQL profile", () => {
  it("backup without pg_dump on PATH is PostgreSQL's refusal (HEARTH_PG_TOOL_MISSING), not the SQLite op's", async () => {
    const home = pgHome(await filledDatabase());
    const run = await runCli(["--json", "worker", "run", "backup"], {
      home,
      env: { ...cliEnv, PATH: "/nonexistent" },
    });
    expect(run.code).not.toBe(0);
    expect((result(run.stdout).error as { code: string }).code).toBe("HEARTH_PG_TOOL_MISSING");
  });

  it.skipIf(!pgToolsFound)(
    "backup writes a verified pg_dump into the home's backups and exits 0",
    async () => {
      const home = pgHome(await filledDatabase());
      const run = await runCli(["--json", "worker", "run", "backup"], { home, env: cliEnv });
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      const report = result(run.stdout).report as Record<string, unknown>;
      expect(report).toMatchObject({ backend: "postgres", format: "custom", dryRun: false });
      expect(readdirSync(join(home, "backups")).filter((n) => n.endsWith(".pgdump"))).toHaveLength(
        1,
      );
    },
  );

  it("doctor diagnoses the database, not a missing state.db", async () => {
    const home = pgHome(await filledDatabase());
    const run = await runCli(["--json", "worker", "run", "doctor"], { home, env: cliEnv });
    const out = result(run.stdout);
    const report = out.report as { backend?: string; findings: { code: string }[] };
    expect(report.backend).toBe("postgres");
    expect(report.findings.map((f) => f.code)).not.toContain("store_missing");
    expect(run.code).toBe(0);
  });
});
