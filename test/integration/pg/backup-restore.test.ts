import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { PG_LATEST_SCHEMA_VERSION } from "../../../src/store/pg/schema.js";
import { runCli } from "../../helpers/cli.js";
import { freshPgDatabase, pgEnabled, pgToolsFound } from "../../helpers/pg.js";
import { cliEnv, filledDatabase, pgContent, pgHome } from "./helpers.js";

/**
 * The restored database holds the dump's rows, and its audit trail is the
 * dump's plus one row of the restore itself (docs/security.md#audit-trail).
 */
async function expectRestored(url: string, original: Record<string, unknown[]>): Promise<void> {
  const { audit_log: trail = [], ...rows } = await pgContent(url);
  const { audit_log: dumped = [], ...expected } = original;
  expect(rows).toEqual(expected);
  const isRestore = (r: unknown) => (r as { action: string }).action === "store.restore";
  expect(trail.filter((r) => !isRestore(r))).toEqual(dumped);
  expect(trail.filter(isRestore)).toHaveLength(1);
}

describe.skipIf(!pgEnabled || !pgToolsFound)("hearth backup and restore on PostgreSQL", () => {
  it("backs up with pg_dump (staged, verified, 0600, named, retained) and restores it into an empty database", async () => {
    const url = await filledDatabase();
    const home = pgHome(url);
    const dry = await runCli(["--json", "backup", "--dry-run"], { home, env: cliEnv });
    expect(dry.code).toBe(0);
    expect(dry.json()).toMatchObject({ dryRun: true, backend: "postgres" });
    // A dry run writes nothing, not even the backups directory.
    expect(existsSync(join(home, "backups"))).toBe(false);
    const first = await runCli(["--json", "backup"], { home, env: cliEnv });
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    const b1 = first.json();
    expect(b1.backend).toBe("postgres");
    expect(b1.format).toBe("custom");
    expect(b1.path).toMatch(
      /\/backups\/default-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z\.pgdump$/,
    );
    expect(statSync(b1.path).mode & 0o777).toBe(0o600);
    expect(b1.entries).toBeGreaterThan(10);
    const listing = execFileSync("pg_restore", ["--list", b1.path], { encoding: "utf8" });
    expect(listing).toMatch(/TABLE public hearth_schema/);
    // No staging file is left behind.
    expect(readdirSync(dirname(b1.path)).filter((n) => n.startsWith(".staging"))).toEqual([]);

    // Retention: --keep 1 removes the older dump.
    const second = await runCli(["--json", "backup", "--keep", "1"], { home, env: cliEnv });
    expect(second.code).toBe(0);
    expect(second.json().removed).toEqual([b1.path]);
    const dump = second.json().path as string;

    // Restore into a scratch database: the same rows in every table.
    const scratch = await freshPgDatabase();
    const restoreHome = pgHome(scratch);
    const restored = await runCli(["--json", "restore", dump, "--yes"], {
      home: restoreHome,
      env: cliEnv,
    });
    expect(restored.stderr).toBe("");
    expect(restored.code).toBe(0);
    const r = restored.json();
    expect(r.schemaVersion).toBe(PG_LATEST_SCHEMA_VERSION);
    expect(r.forensicCopy).toBeNull();
    const original = await pgContent(url);
    expect(r.counts).toEqual(
      Object.fromEntries(Object.entries(original).map(([t, rows]) => [t, rows.length])),
    );
    await expectRestored(scratch, original);

    // A database that holds tables is refused without --force, and left as it was.
    const again = await runCli(["--json", "restore", dump, "--yes"], {
      home: restoreHome,
      env: cliEnv,
    });
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stderr).error.code).toBe("HEARTH_TARGET_NOT_EMPTY");
    await expectRestored(scratch, original);

    // --force replaces it, after dumping it to backups/forensic/.
    const forced = await runCli(["--json", "restore", dump, "--yes", "--force"], {
      home: restoreHome,
      env: cliEnv,
    });
    expect(forced.stderr).toBe("");
    expect(forced.code).toBe(0);
    expect(forced.json().forensicCopy).toMatch(
      /\/backups\/forensic\/default-.*\.replaced\.pgdump$/,
    );
    await expectRestored(scratch, original);
  });

  it("refuses a file that is not a hearth dump, and changes nothing", async () => {
    const url = await freshPgDatabase();
    const home = pgHome(url);
    const bad = join(home, "not-a-dump.pgdump");
    mkdirSync(home, { recursive: true });
    execFileSync("sh", ["-c", `echo nope > '${bad}'`]);
    const refused = await runCli(["--json", "restore", bad, "--yes"], { home, env: cliEnv });
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr).error.code).toBe("HEARTH_BACKUP_INVALID");
  });

  it("without pg_dump in PATH: a coded refusal with the way out, nothing written", async () => {
    const url = await filledDatabase();
    const home = pgHome(url);
    const refused = await runCli(["--json", "backup"], {
      home,
      env: { ...cliEnv, PATH: "/nonexistent" },
    });
    expect(refused.code).toBe(1);
    const err = JSON.parse(refused.stderr).error;
    expect(err.code).toBe("HEARTH_PG_TOOL_MISSING");
    expect(err.hint).toContain("postgresql-client");
    expect(() => readdirSync(join(home, "backups"))).toThrow();
  });

  it("refuses to restore while another hearth process is connected to the database", async () => {
    const url = await filledDatabase();
    const home = pgHome(url);
    const dump = (await runCli(["--json", "backup"], { home, env: cliEnv })).json().path as string;
    const pg = (await import("pg")).default;
    const holder = new pg.Client({
      connectionString: url,
      application_name: "hearth:gateway:4242@elsewhere",
    });
    await holder.connect();
    try {
      const before = await pgContent(url);
      const refused = await runCli(["--json", "restore", dump, "--yes", "--force"], {
        home,
        env: cliEnv,
      });
      expect(refused.code).toBe(3);
      const err = JSON.parse(refused.stderr).error;
      expect(err.code).toBe("HEARTH_STORE_HELD");
      expect(err.message).toContain("hearth:gateway:4242@elsewhere");
      expect(await pgContent(url)).toEqual(before);
    } finally {
      await holder.end();
    }
  });
});
