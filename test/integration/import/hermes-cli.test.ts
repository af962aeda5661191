/**
 * `hearth import hermes` as a process: killed with SIGKILL between two
 * batches and run again, it ends exactly where one uninterrupted run ends;
 * a verification that finds a difference exits non-zero; PostgreSQL takes
 * the same import.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { importInto } from "../../../src/import/import.js";
import { openStore } from "../../../src/store/open.js";
import { runCli } from "../../helpers/cli.js";
import { createHermesDb, HermesWriter } from "../../helpers/hermes-fixture.js";
import { fillBulk, fillHermes } from "../../helpers/hermes-history.js";
import { tempHome } from "../../helpers/home.js";
import { freshPgDatabase, pgEnabled } from "../../helpers/pg.js";
import { snapshot } from "../../helpers/snapshot.js";
import { pgHome } from "../pg/helpers.js";

function bulkSource(home: string): { path: string; messages: number } {
  const dir = join(dirname(home), "hermes");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "state.db");
  const db = createHermesDb(path, 30);
  const content = fillHermes(db, 30);
  const bulk = fillBulk(db, 20, 30);
  db.close();
  return { path, messages: content.messages + bulk };
}

/** Every session and message row of a SQLite home, without the database's own message ids. */
function dump(home: string): { sessions: unknown[]; messages: unknown[] } {
  const db = new Database(join(home, "state.db"), { readonly: true });
  try {
    return {
      sessions: db.prepare("SELECT * FROM sessions ORDER BY id").all(),
      messages: db
        .prepare(
          `SELECT session_id, ordinal, role, content, content_type, name, tool_calls, tool_call_id,
             tokens_in, tokens_out, created_at, active, archived_reason, client_id, metadata
           FROM messages ORDER BY session_id, ordinal`,
        )
        .all(),
    };
  } finally {
    db.close();
  }
}

describe("hearth import hermes (the command)", () => {
  it("killed with SIGKILL mid-import, a rerun ends where an uninterrupted run ends", async () => {
    const home = tempHome();
    const { path, messages } = bulkSource(home);
    const killed = await runCli(["--json", "import", "hermes", path, "--batch", "7"], {
      home,
      env: { HEARTH_FAILPOINTS: "import.after-batch=kill@30" },
    });
    expect(killed.signal).toBe("SIGKILL");
    const partial = dump(home).messages.length;
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(messages);

    const rerun = await runCli(["--json", "import", "hermes", path, "--batch", "7"], { home });
    expect(rerun.stderr).toBe("");
    expect(rerun.code).toBe(0);
    const report = rerun.json();
    expect(report.messages).toMatchObject({
      seen: messages,
      skipped: partial,
      inserted: messages - partial,
    });
    expect(report.verify).toMatchObject({ ok: true, messages });

    const clean = tempHome();
    const once = await runCli(["--json", "import", "hermes", path], { home: clean });
    expect(once.code).toBe(0);
    expect(dump(home)).toEqual(dump(clean));
  });

  it("prints progress as JSON lines when asked, and a verification that fails exits 1", async () => {
    const home = tempHome();
    const { path } = bulkSource(home);
    const first = await runCli(["--json", "--progress", "json", "import", "hermes", path], {
      home,
    });
    expect(first.code).toBe(0);
    const steps = first.stderr
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l).progress);
    expect(steps.at(-1)).toMatchObject({ op: "import", phase: "messages", unit: "messages" });
    expect(steps.at(-1).done).toBe(steps.at(-1).total);

    // hearth's copy of one message changed behind the import's back: a rerun cannot mend it.
    const db = new Database(join(home, "state.db"));
    db.prepare(
      "UPDATE messages SET content = 'tampered' WHERE client_id = (SELECT min(client_id) FROM messages WHERE session_id = 'hermes-bulk_00003')",
    ).run();
    db.close();
    const again = await runCli(["--json", "import", "hermes", path], { home });
    expect(again.code).toBe(1);
    expect(again.json().verify).toMatchObject({ ok: false, differing: 1 });
    expect(again.json().verify.differences[0]).toMatchObject({
      sourceId: "bulk_00003",
      sessionId: "hermes-bulk_00003",
    });
    const error = JSON.parse(again.stderr.slice(again.stderr.indexOf("{\n"))).error;
    expect(error.code).toBe("HEARTH_IMPORT_MISMATCH");
  });

  it("a dry run on the command line writes nothing and says so", async () => {
    const home = tempHome();
    const { path, messages } = bulkSource(home);
    await (await openStore({ home })).close();
    const dry = await runCli(["import", "hermes", path, "--dry-run"], { home });
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`would import ${path}`);
    expect(dry.stdout).toContain(`${messages} seen, ${messages} new`);
    expect(dry.stdout).toContain("message role session_meta");
    expect(dump(home).messages).toEqual([]);
  });

  it("a dry run before anything was written counts everything as new, and leaves no home behind", async () => {
    const home = tempHome();
    const { path, messages } = bulkSource(home);
    expect(existsSync(home)).toBe(false);
    const dry = await runCli(["--json", "import", "hermes", path, "--dry-run"], { home });
    expect(dry.code, dry.stderr).toBe(0);
    const report = dry.json();
    expect(report.dryRun).toBe(true);
    expect(report.sessions).toMatchObject({ created: report.sessions.seen, existing: 0 });
    expect(report.messages).toMatchObject({ seen: messages, inserted: messages, skipped: 0 });
    // The snapshot's working directory, and the home made for it, are gone again.
    expect(existsSync(home)).toBe(false);

    // A home that holds something else (here its configuration) keeps it, and only it.
    mkdirSync(home, { mode: 0o700 });
    writeFileSync(join(home, "config.json"), "{}\n", { mode: 0o600 });
    const before = snapshot(home);
    const again = await runCli(["--json", "import", "hermes", path, "--dry-run"], { home });
    expect(again.code, again.stderr).toBe(0);
    expect(again.json().messages).toMatchObject({ inserted: messages });
    expect(snapshot(home)).toEqual(before);
  });
});

describe.skipIf(!pgEnabled)("hearth import hermes into PostgreSQL", () => {
  it("imports, verifies, and writes nothing on a second run", async () => {
    const home = pgHome(await freshPgDatabase());
    const { path, messages } = bulkSource(home);
    const first = await importInto({ kind: "hermes", path, home, batch: 50 });
    expect(first.messages).toMatchObject({ seen: messages, inserted: messages });
    expect(first.verify).toMatchObject({ ok: true, messages });
    const second = await importInto({ kind: "hermes", path, home });
    expect(second.messages).toMatchObject({ inserted: 0, skipped: messages });
    expect(second.verify?.ok).toBe(true);
    const store = await openStore({ home, role: "reader" });
    try {
      expect(store.backend).toBe("postgres");
      const history = await store.messages.load("hermes-20260104_120000_rewind", {
        includeHistory: true,
      });
      expect(history.map((m) => m.archivedReason)).toEqual([
        "compaction",
        "compaction",
        null,
        "rewind",
        null,
      ]);
      expect((await store.sessions.require("hermes-20260102_113000_tg0002")).parentId).toBe(
        "hermes-20260102_100000_tg0001",
      );
      expect((await store.search("ryokan")).length).toBe(1);
    } finally {
      await store.close();
    }
  });

  it("names the session holding text PostgreSQL cannot store, after importing what came before it", async () => {
    const home = pgHome(await freshPgDatabase());
    const dir = join(dirname(home), "hermes");
    mkdirSync(dir, { recursive: true });
    const path = join(dir, "state.db");
    const db = createHermesDb(path, 30);
    fillBulk(db, 2, 3);
    new HermesWriter(db).message("bulk_00001", {
      role: "user",
      content: "a\u0000b",
      at: 1_768_000_200,
    });
    db.close();
    const err = await importInto({ kind: "hermes", path, home }).then(
      () => null,
      (e: { code?: string; message?: string }) => e,
    );
    expect(err?.code).toBe("HEARTH_VALUE_UNREPRESENTABLE");
    expect(err?.message).toContain("session bulk_00001");
    const store = await openStore({ home, role: "reader" });
    try {
      expect((await store.messages.load("hermes-bulk_00000")).length).toBe(3);
    } finally {
      await store.close();
    }
  });
});
