import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { PG_LATEST_SCHEMA_VERSION } from "../../../src/store/pg/schema.js";
import { runCli } from "../../helpers/cli.js";
import { pgEnabled } from "../../helpers/pg.js";
import { cliEnv, filledDatabase, pgHome } from "./helpers.js";

const clients: pg.Client[] = [];
async function client(
  url: string,
  applicationName: string,
): Promise<pg.Client & { processID: number }> {
  const c = new pg.Client({ connectionString: url, application_name: applicationName });
  await c.connect();
  clients.push(c);
  const processID = (await c.query("SELECT pg_backend_pid() AS pid")).rows[0].pid as number;
  return Object.assign(c, { processID });
}
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.end().catch(() => {})));
});

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("condition not reached");
}

describe.skipIf(!pgEnabled)("hearth doctor and ps on PostgreSQL", () => {
  it("show hearth's connections, advisory locks, row-lock waits and bloat, read back from the server", async () => {
    const url = await filledDatabase();
    const home = pgHome(url);

    const gateway = await client(url, "hearth:gateway:4242@host-a");
    await gateway.query("SELECT pg_advisory_lock($1, 1)", [0x68656172]);
    await gateway.query("BEGIN");
    await gateway.query("SELECT * FROM sessions WHERE id = 'zzz-parent' FOR UPDATE");
    const worker = await client(url, "hearth:worker:99@host-b");
    const blocked = worker.query("UPDATE sessions SET title = 'x' WHERE id = 'zzz-parent'");
    const watcher = await client(url, "test");
    await until(
      async () => (await watcher.query("SELECT 1 FROM pg_locks WHERE NOT granted")).rows.length > 0,
    );
    // Dead rows: inserted and deleted, autovacuum off so they stay until the doctor reads them.
    await watcher.query("ALTER TABLE health_samples SET (autovacuum_enabled = false)");
    await watcher.query(
      "INSERT INTO health_samples SELECT g, 1, 1, 1 FROM generate_series(1, 3000) g",
    );
    await watcher.query("DELETE FROM health_samples WHERE at <= 3000");
    await watcher.query("SELECT pg_stat_force_next_flush()");
    const serverVersion = (await watcher.query("SHOW server_version")).rows[0].server_version;

    const ps = await runCli(["--json", "ps"], { home, env: cliEnv });
    expect(ps.stderr).toBe("");
    expect(ps.code).toBe(0);
    const p = ps.json();
    expect(p.backend).toBe("postgres");
    expect(p.server.version).toBe(serverVersion);
    expect(p.connections).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          kind: "gateway",
          pid: 4242,
          host: "host-a",
          backendPid: gateway.processID,
        }),
        expect.objectContaining({
          kind: "worker",
          pid: 99,
          host: "host-b",
          backendPid: worker.processID,
          state: "active",
        }),
      ]),
    );
    expect(p.locks.advisory).toEqual([
      expect.objectContaining({
        backendPid: gateway.processID,
        key: [0x68656172, 1],
        label: "schema migration",
        granted: true,
      }),
    ]);
    expect(p.locks.waiting).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ backendPid: worker.processID, blockedBy: [gateway.processID] }),
      ]),
    );
    const text = await runCli(["ps"], { home, env: cliEnv });
    expect(text.stdout).toContain("gateway");
    expect(text.stdout).toContain("host-b");
    expect(text.stdout).toMatch(/waits for a \w+ lock/);

    const doctor = await runCli(["--json", "doctor"], { home, env: cliEnv });
    expect(doctor.code).toBe(4); // the lock wait and the bloat are problems
    const d = doctor.json();
    expect(d.pg.server.version).toBe(serverVersion);
    expect(d.pg.schema).toEqual({
      version: PG_LATEST_SCHEMA_VERSION,
      latest: PG_LATEST_SCHEMA_VERSION,
    });
    expect(d.pg.replication).toEqual({ role: "primary", replicas: [], replayLagMs: null });
    const codes = d.findings.map((f: { code: string }) => f.code);
    expect(codes).toContain("pg.lock-wait");
    const bloat = d.findings.find((f: { code: string }) => f.code === "pg.bloat");
    expect(bloat?.message).toContain("health_samples");
    const samples = d.pg.tables.find((t: { table: string }) => t.table === "health_samples");
    expect(samples.deadRows).toBeGreaterThanOrEqual(3000);
    expect(d.pg.counts.sessions).toBe(3);
    // WAL archiving (PostgreSQL's own point-in-time recovery) is reported as the server has it.
    const archive = (await watcher.query("SHOW archive_mode")).rows[0].archive_mode as string;
    expect(d.pg.archive.mode).toBe(archive);
    const archiving = d.findings.find((f: { code: string }) => f.code === "pg.archive");
    expect(archiving.message).toMatch(
      archive === "off" ? /^WAL archiving off \(archive_mode off\)/ : /archive_mode /,
    );

    // Released: no wait left; the doctor is back to ok for locks.
    await gateway.query("ROLLBACK");
    await blocked;
    await gateway.query("SELECT pg_advisory_unlock_all()");
    await watcher.query("VACUUM health_samples");
    await watcher.query("SELECT pg_stat_force_next_flush()");
    const after = await runCli(["--json", "doctor"], { home, env: cliEnv });
    const a = after.json();
    expect(a.findings.map((f: { code: string }) => f.code)).not.toContain("pg.lock-wait");
    expect(a.pg.locks.advisory).toEqual([]);
  });

  it("a server that is down or refuses the login is a doctor finding with its code (exit 4)", async () => {
    const url = await filledDatabase();
    const down = new URL(url);
    down.port = "1";
    const doctor = await runCli(["--json", "doctor"], {
      home: pgHome(down.toString()),
      env: cliEnv,
    });
    expect(doctor.code).toBe(4);
    const d = doctor.json();
    expect(d.status).toBe("error");
    expect(d.findings[0].code).toBe("pg.unreachable");
    expect(d.findings[0].message).toContain("HEARTH_PG_UNAVAILABLE");
    const wrong = new URL(url);
    wrong.password = "nope";
    const auth = await runCli(["--json", "doctor"], {
      home: pgHome(wrong.toString()),
      env: cliEnv,
    });
    expect(auth.code).toBe(4);
    expect(auth.json().findings[0].code).toBe("pg.auth");
    expect(auth.stdout).not.toContain("nope");
    const ps = await runCli(["--json", "ps"], { home: pgHome(down.toString()), env: cliEnv });
    expect(ps.code).toBe(1);
    expect(JSON.parse(ps.stderr).error.code).toBe("HEARTH_PG_UNAVAILABLE");
  });
});
