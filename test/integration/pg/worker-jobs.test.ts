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
import { cliEnv, filledDatabase, pgContent, pgHome } from "./helpers.js";

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

  it("optimize runs VACUUM (ANALYZE) on hearth's tables, as a job (its default window is moot) and from the CLI", async () => {
    const home = pgHome(await filledDatabase());
    const job = await runCli(["--json", "worker", "run", "optimize", "--window"], {
      home,
      env: cliEnv,
    });
    expect(job.stderr).toBe("");
    expect(job.code).toBe(0);
    const out = result(job.stdout);
    expect(out.summary).toMatch(/^optimize \(VACUUM ANALYZE\): \d+ -> \d+ bytes$/);
    const report = out.report as { backend: string; steps: { step: string; done: boolean }[] };
    expect(report.backend).toBe("postgres");
    expect(report.steps.map((s) => s.step)).toContain("vacuum analyze job_runs");
    expect(report.steps.every((s) => s.done)).toBe(true);
    const cli = await runCli(["sessions", "optimize"], { home, env: cliEnv });
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain("done  vacuum analyze messages");
    expect(cli.stdout).not.toMatch(/WAL|state\.db/);
  });

  it("repair and --window refuse on PostgreSQL, naming it and the way out, and change nothing", async () => {
    const url = await filledDatabase();
    const home = pgHome(url);
    const before = await pgContent(url);
    for (const args of [
      ["sessions", "repair"],
      ["sessions", "repair", "--window"],
      ["sessions", "optimize", "--window"],
    ]) {
      const run = await runCli(["--json", ...args], { home, env: cliEnv });
      expect(run.code, args.join(" ")).not.toBe(0);
      const error = JSON.parse(run.stderr).error as {
        code: string;
        message: string;
        hint: string;
      };
      expect(error.code, args.join(" ")).toBe("HEARTH_UNSUPPORTED_BACKEND");
      expect(error.message).toMatch(/is on PostgreSQL \(postgres:\/\/.*\); nothing was done$/);
      expect(error.hint).toMatch(
        args[1] === "repair" && args.length === 2 ? /pg_amcheck/ : /without --window/,
      );
    }
    expect(await pgContent(url)).toEqual(before);
  });
});
