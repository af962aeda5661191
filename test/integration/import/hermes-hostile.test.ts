/**
 * hearth import hermes on hostile sources: each is refused with its code,
 * naming what is wrong, and nothing is imported; a live writer holding a
 * transaction and a WAL never checkpointed are read as of their last
 * commit, and the source is never changed.
 */
import { createHash } from "node:crypto";
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { isHearthError } from "../../../src/errors.js";
import { importInto } from "../../../src/import/import.js";
import { runCli } from "../../helpers/cli.js";
import { createHermesDb } from "../../helpers/hermes-fixture.js";
import { fillHermes, writeHermesDb } from "../../helpers/hermes-history.js";
import { tempHome } from "../../helpers/home.js";
import { spawnNode } from "../../helpers/process.js";

const WRITER = fileURLToPath(new URL("../../fixtures/hermes-writer.mjs", import.meta.url));

function place(home: string): string {
  const dir = join(dirname(home), "hermes");
  mkdirSync(dir, { recursive: true });
  return join(dir, "state.db");
}

async function refusal(home: string, path: string) {
  try {
    await importInto({ kind: "hermes", path, home });
  } catch (err) {
    if (isHearthError(err)) {
      // Refused before anything was written: no store was even created.
      expect(existsSync(join(home, "state.db"))).toBe(false);
      return err;
    }
    throw err;
  }
  throw new Error("the import was not refused");
}

const digest = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

describe("hearth import hermes refuses hostile sources, naming them", () => {
  it("a missing file, a file that is not SQLite, another SQLite database", async () => {
    const home = tempHome();
    const path = place(home);
    expect((await refusal(home, path)).code).toBe("HEARTH_IMPORT_SOURCE_INVALID");
    writeFileSync(path, "this is a log file, not a database\n".repeat(200));
    const notSqlite = await refusal(home, path);
    expect(notSqlite.code).toBe("HEARTH_IMPORT_SOURCE_INVALID");
    expect(notSqlite.message).toContain(path);
    rmSync(path);
    const other = new Database(path);
    other.exec("CREATE TABLE notes (body TEXT)");
    other.close();
    const foreign = await refusal(home, path);
    expect(foreign.code).toBe("HEARTH_IMPORT_SOURCE_INVALID");
    expect(foreign.message).toContain("not a Hermes Agent state.db");
  });

  it("a truncated file and a corrupt one", async () => {
    const home = tempHome();
    const path = place(home);
    const db = createHermesDb(path, 30);
    fillHermes(db, 30);
    db.exec(`CREATE TABLE padding (x TEXT);
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
      INSERT INTO padding SELECT hex(randomblob(2000)) FROM n`);
    db.close();
    const size = statSync(path).size;
    truncateSync(path, Math.floor(size / 2));
    expect((await refusal(home, path)).code).toBe("HEARTH_IMPORT_SOURCE_INVALID");

    writeHermesDb(`${path}.2`, 30);
    renameSync(`${path}.2`, path);
    const fd = openSync(path, "r+");
    // Garbage over the second page (a table's b-tree page): the file still opens, its content is damaged.
    writeSync(fd, Buffer.alloc(4096, 0xa5), 0, 4096, 4096);
    closeSync(fd);
    const corrupt = await refusal(home, path);
    expect(corrupt.code).toBe("HEARTH_IMPORT_SOURCE_INVALID");
    expect(corrupt.message).toMatch(/truncated or corrupt/);
  });

  it("a newer schema version, named; an older one, named", async () => {
    const home = tempHome();
    const path = place(home);
    writeHermesDb(path, 30);
    const db = new Database(path);
    db.prepare("UPDATE schema_version SET version = 31").run();
    db.close();
    const newer = await refusal(home, path);
    expect(newer.code).toBe("HEARTH_IMPORT_SCHEMA_UNSUPPORTED");
    expect(newer.message).toContain("schema version 31");
    expect(newer.details).toEqual({ version: 31 });
    const old = new Database(path);
    old.prepare("UPDATE schema_version SET version = 16").run();
    old.close();
    const older = await refusal(home, path);
    expect(older.code).toBe("HEARTH_IMPORT_SCHEMA_UNSUPPORTED");
    expect(older.message).toContain("schema version 16");
  });

  it("a symlinked source, and a symlinked -wal", async () => {
    const home = tempHome();
    const path = place(home);
    writeHermesDb(path, 30);
    const link = join(dirname(path), "link.db");
    symlinkSync(path, link);
    const linked = await refusal(home, link);
    expect(linked.code).toBe("HEARTH_PATH_SYMLINK");
    expect(linked.resource).toBe(link);
    symlinkSync(join(dirname(path), "elsewhere"), `${path}-wal`);
    expect((await refusal(home, path)).code).toBe("HEARTH_PATH_SYMLINK");
  });

  it("a source on a network filesystem (exit 1, the code, nothing written)", async () => {
    const home = tempHome();
    const path = place(home);
    writeHermesDb(path, 30);
    const result = await runCli(["--json", "import", "hermes", path], {
      home,
      env: { HEARTH_FAILPOINTS: "import.source-fs=fail" },
    });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stderr.slice(result.stderr.indexOf("{\n"))).error.code).toBe(
      "HEARTH_IMPORT_UNSAFE_FS",
    );
    expect(existsSync(join(home, "state.db"))).toBe(false);
  });
});

describe("hearth import hermes beside a live writer", () => {
  it("reads a writer's WAL as of its last commit while it holds a transaction, and changes nothing", async () => {
    const home = tempHome();
    const path = place(home);
    const content = writeHermesDb(path, 30);
    const writer = spawnNode([WRITER, path, "20260101_090000_a1b2c3", "50", "7"]);
    await writer.json((v: { pending?: number }) => v.pending === 7, "the open transaction");
    // The commits sit in the -wal, never checkpointed; the open transaction holds the write lock.
    expect(statSync(`${path}-wal`).size).toBeGreaterThan(0);
    const before = { db: digest(path), wal: digest(`${path}-wal`) };

    const during = await importInto({ kind: "hermes", path, home });
    expect(during.snapshot).toBe("backup");
    expect(during.messages.inserted).toBe(content.messages + 50);
    expect(during.verify?.ok).toBe(true);
    expect({ db: digest(path), wal: digest(`${path}-wal`) }).toEqual(before);

    writer.send("commit");
    await writer.json((v: { done?: boolean }) => v.done === true, "the commit");
    const after = await importInto({ kind: "hermes", path, home });
    expect(after.messages).toMatchObject({ inserted: 7, skipped: content.messages + 50 });
    expect(after.verify?.ok).toBe(true);

    // Killed: the -wal keeps commits the file does not have. With its -shm
    // gone too, the WAL is copied and recovered privately: everything comes over.
    await writer.kill("SIGKILL");
    rmSync(`${path}-shm`);
    const fresh = tempHome();
    const recovered = await importInto({ kind: "hermes", path, home: fresh });
    expect(recovered.snapshot).toBe("copy");
    expect(recovered.messages.inserted).toBe(content.messages + 57);
    expect(recovered.verify?.ok).toBe(true);
    expect(existsSync(`${path}-shm`)).toBe(false);
    const check = new Database(path, { readonly: true });
    expect(check.pragma("quick_check", { simple: true })).toBe("ok");
    check.close();
  });
});

describe("hearth import hermes beside a rollback-journal writer", () => {
  it("refuses while the writer holds the file exclusively, never tearing it, and imports once it is done", async () => {
    const home = tempHome();
    const path = place(home);
    const db = createHermesDb(path, 30);
    const content = fillHermes(db, 30);
    db.pragma("journal_mode = DELETE");
    db.close();
    const holder = spawnNode([
      "-e",
      `const Database = require(${JSON.stringify(createRequire(import.meta.url).resolve("better-sqlite3"))});
       const db = new Database(${JSON.stringify(path)});
       db.exec("BEGIN EXCLUSIVE");
       db.prepare("INSERT INTO messages (session_id, role, content, timestamp) VALUES ('20260101_090000_a1b2c3', 'user', 'held', 1769000000)").run();
       console.log("held");
       process.stdin.on("data", () => { db.exec("COMMIT"); db.close(); console.log("done"); process.exit(0); });`,
    ]);
    await holder.line((l) => l === "held", "the exclusive lock");
    const err = await importInto({ kind: "hermes", path, home, sourceBusyMs: 300 }).then(
      () => null,
      (e: { code?: string }) => e,
    );
    expect(err?.code).toBe("HEARTH_IMPORT_SOURCE_BUSY");
    expect(existsSync(join(home, "state.db"))).toBe(false);
    holder.send("commit");
    await holder.exited;
    const after = await importInto({ kind: "hermes", path, home });
    expect(after.messages.inserted).toBe(content.messages + 1);
    expect(after.verify?.ok).toBe(true);
  });
});
