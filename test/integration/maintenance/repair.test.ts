import { createHash } from "node:crypto";
import {
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { runCli } from "../../helpers/cli.js";
import { tempHome } from "../../helpers/home.js";
import { startWorker } from "../../helpers/worker.js";

// Every damaged store here is made by the test itself: bytes flipped in a
// b-tree page, the FTS shadow table overwritten, the header broken.

const sha = (p: string) => createHash("sha256").update(readFileSync(p)).digest("hex");

/** A closed store with 20 sessions of 50 messages each. */
async function seeded(): Promise<{ home: string; db: string }> {
  const home = tempHome();
  const store = await openStore({ home });
  for (let i = 0; i < 20; i++) {
    const s = await store.sessions.create({ title: `s${i}` });
    await store.messages.appendBatch(
      s.id,
      Array.from({ length: 50 }, (_, j) => ({
        role: "user" as const,
        content: `hello world ${i} ${j} ${"x".repeat(80)}`,
      })),
    );
  }
  await store.close();
  return { home, db: join(home, "state.db") };
}

function corruptSearchIndex(db: string): void {
  const raw = new Database(db);
  raw.unsafeMode(true); // shadow tables are protected otherwise
  raw.exec("UPDATE messages_fts_data SET block = randomblob(50) WHERE id > 10");
  raw.close();
}

function overwrite(db: string, offset: number, length: number): void {
  const fd = openSync(db, "r+");
  writeSync(fd, Buffer.alloc(length, 0x5a), 0, length, offset);
  closeSync(fd);
}

describe("a damaged search index (FTS)", () => {
  it("does not stop writes; search says it is degraded; repair rebuilds the index alone", async () => {
    const { home, db } = await seeded();
    corruptSearchIndex(db);
    const store = await openStore({ home });
    const session = await store.sessions.create({ title: "during damage" });
    for (let i = 0; i < 100; i++) {
      await store.messages.append(session.id, {
        role: "user",
        content: `kept while degraded ${i}`,
      });
    }
    await expect(store.search("kept")).rejects.toMatchObject({ code: "HEARTH_SEARCH_DEGRADED" });
    expect((await store.messages.load(session.id)).length).toBe(100);
    await store.close();

    const doctor = await runCli(["--json", "doctor"], { home });
    expect(doctor.code).toBe(4);
    expect(JSON.parse(doctor.stdout).findings).toContainEqual(
      expect.objectContaining({ code: "search_index", severity: "error" }),
    );
    const repaired = await runCli(["--json", "sessions", "repair"], { home });
    expect(repaired.code).toBe(0);
    expect(JSON.parse(repaired.stdout)).toMatchObject({ strategy: "fts-rebuild" });

    const after = await openStore({ home });
    expect(await after.search("degraded", { limit: 500 })).toHaveLength(100);
    expect((await after.counts()).messages).toBe(1100);
    await after.close();
  });
});

describe("hearth sessions repair", () => {
  it("salvages a store with a broken b-tree page, keeping a forensic copy first", async () => {
    const { home, db } = await seeded();
    overwrite(db, 4096 * 40, 4096);
    const damaged = sha(db);
    const r = await runCli(["--json", "sessions", "repair"], { home });
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(["reindex", "salvage"]).toContain(result.strategy);
    // The forensic copy holds the damaged bytes exactly.
    expect(sha(join(result.forensicCopy, "state.db"))).toBe(damaged);
    const check = new Database(db, { readonly: true });
    expect(check.pragma("quick_check", { simple: true })).toBe("ok");
    check.close();
    const doctor = await runCli(["--json", "doctor"], { home });
    expect(
      JSON.parse(doctor.stdout).findings.filter(
        (f: { severity: string }) => f.severity === "error",
      ),
    ).toEqual([]);
  });

  it("stops after 3 failed attempts on one damage and keeps one forensic copy, leaving the store as it was", async () => {
    const { home, db } = await seeded();
    overwrite(db, 100, 3000); // the schema page: nothing can be read
    const damaged = sha(db);
    const codes: string[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await runCli(["--json", "sessions", "repair"], { home });
      expect(r.code).toBe(1);
      codes.push(JSON.parse(r.stderr).error.code);
    }
    expect(codes.filter((c) => c === "HEARTH_REPAIR_FAILED")).toHaveLength(3);
    expect(codes.slice(3).every((c) => c === "HEARTH_REPAIR_GAVE_UP")).toBe(true);
    const ledger = JSON.parse(readFileSync(join(home, "repair-ledger.json"), "utf8"));
    expect(Object.values(ledger)).toEqual([
      expect.objectContaining({ attempts: 3, failures: 3, repaired: false }),
    ]);
    const forensic = join(home, "backups", "forensic");
    expect(readdirSync(forensic).filter((n) => !n.startsWith("."))).toHaveLength(1);
    expect(sha(db)).toBe(damaged);
    // No staging debris is left next to the store.
    expect(readdirSync(home).filter((n) => n.startsWith(".repair-"))).toEqual([]);
    const doctor = await runCli(["--json", "doctor"], { home });
    expect(JSON.parse(doctor.stdout).findings).toContainEqual(
      expect.objectContaining({ code: "repair_ledger", severity: "error" }),
    );
  });

  it("refuses when the ledger cannot be read: an unreadable ledger never resets the budget (M3)", async () => {
    const { home, db } = await seeded();
    overwrite(db, 100, 3000);
    for (let i = 0; i < 3; i++) {
      const r = await runCli(["--json", "sessions", "repair"], { home });
      expect(JSON.parse(r.stderr).error.code).toBe("HEARTH_REPAIR_FAILED");
    }
    const damaged = sha(db);
    const forensic = join(home, "backups", "forensic");
    const copies = readdirSync(forensic).length;
    // A torn write, a bad edit or a shape hearth did not write: each is refused.
    for (const garbage of ['{"attempts": 3', "[]", '{"x": {"attempts": "three"}}']) {
      writeFileSync(join(home, "repair-ledger.json"), garbage);
      const r = await runCli(["--json", "sessions", "repair"], { home });
      expect(r.code, r.stderr).toBe(1);
      expect(JSON.parse(r.stderr).error.code).toBe("HEARTH_REPAIR_LEDGER_UNREADABLE");
      expect(sha(db)).toBe(damaged);
      expect(readdirSync(forensic)).toHaveLength(copies);
      expect(readFileSync(join(home, "repair-ledger.json"), "utf8")).toBe(garbage);
    }
    const doctor = await runCli(["--json", "doctor"], { home });
    expect(JSON.parse(doctor.stdout).findings).toContainEqual(
      expect.objectContaining({ code: "repair_ledger", severity: "error" }),
    );
  });

  it("refuses with exit 3 while any process holds the store, naming it, and changes nothing", async () => {
    const { home, db } = await seeded();
    const reader = await startWorker({ HEARTH_PROCESS_KIND: "dashboard" });
    await reader.call("open", { home, role: "reader" });
    const before = sha(db);
    const r = await runCli(["sessions", "repair"], { home });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`pid ${reader.pid}`);
    expect(r.stderr).toContain("dashboard");
    expect(sha(db)).toBe(before);
    expect(existsSync(join(home, "backups", "forensic"))).toBe(false);
  });

  it("says a healthy store needs nothing and writes nothing", async () => {
    const { home, db } = await seeded();
    const before = sha(db);
    const r = await runCli(["--json", "sessions", "repair"], { home });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).strategy).toBe("none");
    expect(sha(db)).toBe(before);
    expect(existsSync(join(home, "repair-ledger.json"))).toBe(false);
  });
});
