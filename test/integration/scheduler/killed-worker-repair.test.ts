import { closeSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import type { JobRun } from "../../../src/store/runs.js";
import { runCli } from "../../helpers/cli.js";
import { tempHome } from "../../helpers/home.js";
import { startScheduler, untilRuns, writeJobs } from "../../helpers/scheduler.js";

// A worker killed -9 mid-job is recorded failed; that record must outlive a
// repair of the store. Salvage (the last strategy, a broken index b-tree)
// copied sessions, messages and meta only: every job run, the audit log and
// the tokens were gone, and the killed run was neither failed nor anywhere
// (the 30-minute torture run: 23 killed workers not recorded).

/** Sessions enough for the messages indexes to span many leaf pages. */
async function seed(home: string): Promise<void> {
  const store = await openStore({ home });
  for (let i = 0; i < 20; i++) {
    const s = await store.sessions.create({ title: `s${i}` });
    await store.messages.appendBatch(
      s.id,
      Array.from({ length: 50 }, (_, j) => ({
        role: "user" as const,
        content: `hello ${i} ${j} ${"x".repeat(80)}`,
      })),
    );
  }
  await store.close();
}

/** Overwrite a leaf of the largest index past its header, as torture/scratch-tool's damage-index does. */
function damageIndex(db: string): string {
  const conn = new Database(db);
  conn.pragma("wal_checkpoint(TRUNCATE)"); // every page in the file, none left in the WAL
  const pageSize = conn.pragma("page_size", { simple: true }) as number;
  const leaves = conn
    .prepare(
      `SELECT name, pageno FROM dbstat WHERE pagetype = 'leaf'
        AND name IN (SELECT name FROM sqlite_schema WHERE type = 'index') ORDER BY name, pageno`,
    )
    .all() as { name: string; pageno: number }[];
  conn.close();
  const count = new Map<string, number>();
  for (const l of leaves) count.set(l.name, (count.get(l.name) ?? 0) + 1);
  const largest = [...count].sort((a, b) => b[1] - a[1])[0]![0];
  const leaf = leaves.filter((l) => l.name === largest)[1]!;
  const fd = openSync(db, "r+");
  writeSync(
    fd,
    Buffer.alloc(pageSize - 8, 0xa5),
    0,
    pageSize - 8,
    (leaf.pageno - 1) * pageSize + 8,
  );
  closeSync(fd);
  return largest;
}

describe("a killed worker's run through a repair", () => {
  it("stays recorded failed, with its worker's pid, after a salvage of the store", async () => {
    const home = tempHome();
    await seed(home);
    writeJobs(home, [
      { name: "slow", schedule: "* * * * * *", kind: "command", command: "sleep 30" },
    ]);
    const s = await startScheduler(home);
    const [run] = await untilRuns(home, "a running worker", (r) =>
      r.some((x) => x.worker !== null),
    );
    const pid = run!.worker!.pid;
    process.kill(-pid, "SIGKILL"); // the worker's process group: the worker and its sleep
    await untilRuns(home, "the killed run finished", (r) =>
      r.some((x) => x.id === run!.id && x.outcome !== "running"),
    );
    await s.process.stop();

    const index = damageIndex(join(home, "state.db"));
    const repaired = await runCli(["--json", "sessions", "repair"], { home });
    expect(repaired.code, repaired.stderr).toBe(0);
    const result = JSON.parse(repaired.stdout);
    // REINDEX cannot drop a b-tree it cannot walk: the rows are salvaged.
    expect(result.strategy, `damaged index ${index}`).toBe("salvage");
    expect(result.salvaged.messages).toBeGreaterThan(0);

    const listed = await runCli(["--json", "cron", "runs", "--limit", "100000"], { home });
    expect(listed.code, listed.stderr).toBe(0);
    const runs = JSON.parse(listed.stdout).runs as JobRun[];
    const killed = runs.filter((r) => r.worker?.pid === pid);
    expect(killed, JSON.stringify(runs.slice(0, 5))).toHaveLength(1);
    expect(killed[0]).toMatchObject({ outcome: "failed", signal: "SIGKILL", job: "slow" });
    expect(result.salvaged.tables.job_runs).toBe(runs.length);
  });
});
