import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { runCli } from "../../helpers/cli.js";
import { startGateway } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { startWorker } from "../../helpers/worker.js";

async function worker(kind: string, home: string, args: Record<string, unknown> = {}) {
  const w = await startWorker({ HEARTH_PROCESS_KIND: kind });
  await w.call("open", { home, ...args });
  return w;
}

/** SHA-256 of the database and of its -wal ("absent" when there is none). */
function bytesOf(db: string): { db: string; wal: string } {
  const hash = (p: string) =>
    existsSync(p) ? createHash("sha256").update(readFileSync(p)).digest("hex") : "absent";
  return { db: hash(db), wal: hash(`${db}-wal`) };
}

/** A store with three sessions of 100 messages each; returns the first session's id. */
async function seed(home: string): Promise<string> {
  const store = await openStore({ home });
  const big = "x".repeat(2000);
  let first = "";
  for (let i = 0; i < 3; i++) {
    const s = await store.sessions.create({ title: `s${i}` });
    first ||= s.id;
    await store.messages.appendBatch(
      s.id,
      Array.from({ length: 100 }, (_, n) => ({
        role: "user" as const,
        content: `${i}-${n} ${big}`,
      })),
    );
  }
  await store.close();
  return first;
}

/** Delete a session through a short-lived writer: pages for VACUUM to give back, and WAL content. */
async function deleteSession(home: string, id: string): Promise<void> {
  const store = await openStore({ home });
  expect(await store.sessions.delete(id)).toBe(true);
  await store.close();
}

const EMPTY = createHash("sha256").digest("hex");

type Holder = { pid: number; kind: string };
const scenarios: [string, (home: string) => Promise<Holder[]>][] = [
  ["a gateway", async (home) => [{ pid: (await startGateway(home)).pid, kind: "gateway" }]],
  [
    "a dashboard-kind writer",
    async (home) => [{ pid: (await worker("dashboard", home)).pid, kind: "dashboard" }],
  ],
  [
    "a worker and a cli-kind writer",
    async (home) => [
      { pid: (await worker("worker", home)).pid, kind: "worker" },
      { pid: (await worker("cli", home)).pid, kind: "cli" },
    ],
  ],
];

describe("hearth sessions optimize is structural", () => {
  it.each(
    scenarios,
  )("is refused with exit 3 while %s holds the store, naming it, changing nothing", async (_, hold) => {
    const home = tempHome();
    const db = join(home, "state.db");
    const victim = await seed(home);
    const holders = await hold(home);
    await deleteSession(home, victim);
    const before = bytesOf(db);
    // The holders keep the deletion in the -wal: both files have content to protect.
    expect(before.wal).not.toBe(EMPTY);
    expect(before.wal).not.toBe("absent");
    for (const dry of [[], ["--dry-run"]]) {
      const text = await runCli(["sessions", "optimize", ...dry], { home });
      expect(text.code, text.stderr).toBe(3);
      expect(text.stderr).toContain("refusing to optimize");
      for (const h of holders) expect(text.stderr).toContain(`pid ${h.pid}  ${h.kind} (`);

      const json = await runCli(["--json", "sessions", "optimize", ...dry], { home });
      expect(json.code).toBe(3);
      expect(json.stdout).toBe("");
      const { error } = JSON.parse(json.stderr);
      expect(error.code).toBe("HEARTH_STORE_HELD");
      const listed = (error.details.holders as Holder[]).map((h) => ({ pid: h.pid, kind: h.kind }));
      expect(listed.sort((a, b) => a.pid - b.pid)).toEqual(
        [...holders].sort((a, b) => a.pid - b.pid),
      );
      expect(bytesOf(db)).toEqual(before);
    }
  });

  it("runs while only a hearth reader holds the store", async () => {
    const home = tempHome();
    await seed(home);
    await worker("worker", home, { role: "reader" });
    const r = await runCli(["--json", "sessions", "optimize"], { home });
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.steps.find((s: { step: string }) => s.step === "vacuum")).toEqual({
      step: "vacuum",
      done: true,
    });
  });

  it("runs when nothing holds the store, and reports sizes and steps", async () => {
    const home = tempHome();
    const db = join(home, "state.db");
    await deleteSession(home, await seed(home));
    const dry = await runCli(["--json", "sessions", "optimize", "--dry-run"], { home });
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout).steps.every((s: { done: boolean }) => !s.done)).toBe(true);

    const r = await runCli(["--json", "sessions", "optimize"], { home });
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result).toMatchObject({ path: db, dryRun: false, walAfter: 0 });
    expect(result.steps).toEqual([
      { step: "fts optimize", done: true },
      { step: "analyze", done: true },
      { step: "vacuum", done: true },
      { step: "wal truncate", done: true },
    ]);
    // The deleted session's pages were given back.
    expect(result.sizeAfter).toBeLessThan(result.sizeBefore);
    expect(result.sizeBefore).toBeGreaterThan(0);
    expect(statSync(db).size).toBe(result.sizeAfter);

    const text = await runCli(["sessions", "optimize"], { home });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^done {2}vacuum$/m);
  });
});

describe("hearth restore is offline", () => {
  it("is refused with exit 3 even while only a reader holds the store, and runs when nothing does", async () => {
    const home = tempHome();
    const db = join(home, "state.db");
    await seed(home);
    const made = await runCli(["--json", "backup"], { home });
    expect(made.code, made.stderr).toBe(0);
    const backupFile = JSON.parse(made.stdout).path as string;

    const reader = await worker("worker", home, { role: "reader" });
    const before = bytesOf(db);
    const r = await runCli(["restore", backupFile, "--yes"], { home });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain(`pid ${reader.pid}  worker (reader)`);
    const json = await runCli(["--json", "restore", backupFile, "--yes"], { home });
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stderr).error.details.holders).toEqual([
      expect.objectContaining({ pid: reader.pid, roles: ["reader"] }),
    ]);
    expect(bytesOf(db)).toEqual(before);
    // No forensic copy: nothing was about to change.
    const forensic = join(home, "backups", "forensic");
    expect(existsSync(forensic) ? readdirSync(forensic) : []).toEqual([]);

    await reader.call("close");
    const ok = await runCli(["--json", "restore", backupFile, "--yes"], { home });
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ path: db, dryRun: false });
    expect(readdirSync(forensic)).toHaveLength(1);
  });
});

describe("a writer arriving mid-surgery", () => {
  it("gets HEARTH_MAINTENANCE_RUNNING naming the surgeon after gateWaitMs, and opens once it ended", async () => {
    const home = tempHome();
    await seed(home);
    const surgeon = await worker("worker", home);
    await surgeon.call("beginSurgery");
    const late = await startWorker({ HEARTH_PROCESS_KIND: "worker" });
    const args = { home, config: { store: { gateWaitMs: 300 } } };
    const started = Date.now();
    const refused = await late.request("open", args);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(refused.ok).toBe(false);
    expect(refused.error?.code).toBe("HEARTH_MAINTENANCE_RUNNING");
    expect(refused.error?.message).toContain(`pid ${surgeon.pid}  worker (`);
    expect(refused.error?.message).toMatch(/surgeon/);

    await surgeon.call("endSurgery");
    expect(await late.call("open", args)).toMatchObject({ path: join(home, "state.db") });
  });
});
