import { execFileSync } from "node:child_process";
import {
  chownSync,
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { HEARTH_APPLICATION_ID } from "../../../src/files/inspect.js";
import { openStore } from "../../../src/index.js";
import { runCli } from "../../helpers/cli.js";
import { tempHome } from "../../helpers/home.js";
import { snapshot } from "../../helpers/snapshot.js";

async function expectRefused(home: string, code: string, role: "writer" | "reader" = "writer") {
  const before = snapshot(home);
  await expect(openStore({ home, role })).rejects.toMatchObject({ name: "HearthError", code });
  expect(snapshot(home)).toEqual(before);
}

function newHome(): string {
  const home = tempHome();
  mkdirSync(home, { recursive: true, mode: 0o700 });
  return home;
}

describe("refusals leave the path untouched (F1)", () => {
  it("a symlink at the database path, even to a valid hearth store", async () => {
    const real = tempHome();
    const store = await openStore({ home: real });
    await store.close();
    const home = newHome();
    symlinkSync(join(real, "state.db"), join(home, "state.db"));
    await expectRefused(home, "HEARTH_PATH_SYMLINK");
  });

  it("a dangling symlink at the database path (SQLite would create the target)", async () => {
    const home = newHome();
    const target = join(home, "..", "elsewhere.db");
    symlinkSync(target, join(home, "state.db"));
    await expectRefused(home, "HEARTH_PATH_SYMLINK");
    expect(existsSync(target)).toBe(false);
  });

  for (const suffix of ["-wal", "-shm", "-journal"]) {
    it(`a symlink at the ${suffix} sidecar`, async () => {
      const home = tempHome();
      const store = await openStore({ home });
      await store.close();
      symlinkSync("/dev/null", join(home, `state.db${suffix}`));
      await expectRefused(home, "HEARTH_PATH_SYMLINK");
    });
  }

  it("a directory at the database path", async () => {
    const home = newHome();
    mkdirSync(join(home, "state.db"));
    await expectRefused(home, "HEARTH_PATH_NOT_REGULAR");
  });

  it("a FIFO at the database path", async () => {
    const home = newHome();
    execFileSync("mkfifo", [join(home, "state.db")]);
    await expectRefused(home, "HEARTH_PATH_NOT_REGULAR");
  });

  it("a file owned by another user", async () => {
    const home = tempHome();
    const store = await openStore({ home });
    await store.close();
    const uid = (process.getuid?.() ?? 0) + 4242;
    chownSync(join(home, "state.db"), uid, uid);
    await expectRefused(home, "HEARTH_PATH_FOREIGN_OWNER");
  });

  it("a database with a second name (a hard link), and doctor says so", async () => {
    const home = tempHome();
    const store = await openStore({ home });
    await store.close();
    const elsewhere = join(tempHome(), "..", "copy-of-state.db");
    linkSync(join(home, "state.db"), elsewhere);
    await expectRefused(home, "HEARTH_PATH_HARDLINK");
    await expectRefused(home, "HEARTH_PATH_HARDLINK", "reader");
    const doctor = await runCli(["--json", "doctor"], { home });
    expect(doctor.code).toBe(4);
    expect(doctor.json().findings).toContainEqual(
      expect.objectContaining({ code: "file_links", severity: "error" }),
    );
  });

  it("a file that is not a SQLite database", async () => {
    const home = newHome();
    writeFileSync(join(home, "state.db"), "these are my notes, not a database\n".repeat(10), {
      mode: 0o600,
    });
    await expectRefused(home, "HEARTH_NOT_SQLITE");
    await expectRefused(home, "HEARTH_NOT_SQLITE", "reader");
  });

  it("a hearth database cut off inside its first page (SQLite would leave -wal and -shm behind)", async () => {
    const home = tempHome();
    const store = await openStore({ home });
    await store.sessions.create({ title: "x" });
    await store.close();
    const path = join(home, "state.db");
    writeFileSync(path, readFileSync(path).subarray(0, 100)); // the header, in WAL mode, and nothing else
    await expectRefused(home, "HEARTH_NOT_SQLITE");
    await expectRefused(home, "HEARTH_NOT_SQLITE", "reader");
  });

  it("a quiet hearth database cut short after whole pages (shorter than its header says)", async () => {
    const home = tempHome();
    const store = await openStore({ home });
    const s = await store.sessions.create({ title: "x" });
    for (let i = 0; i < 50; i++)
      await store.messages.append(s.id, { role: "user", content: "y".repeat(500) });
    await store.close();
    const path = join(home, "state.db");
    writeFileSync(path, readFileSync(path).subarray(0, 4096)); // page 1 only
    await expectRefused(home, "HEARTH_NOT_SQLITE");
    await expectRefused(home, "HEARTH_NOT_SQLITE", "reader");
  });

  it("a SQLite database hearth did not create", async () => {
    const home = newHome();
    const db = new Database(join(home, "state.db"));
    db.exec("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)");
    db.prepare("INSERT INTO customers (name) VALUES ('ada')").run();
    db.close();
    await expectRefused(home, "HEARTH_FOREIGN_DATABASE");
  });

  it("a SQLite database with another application's id", async () => {
    const home = newHome();
    const db = new Database(join(home, "state.db"));
    db.pragma("application_id = 1234");
    db.close();
    await expectRefused(home, "HEARTH_FOREIGN_DATABASE");
  });

  it("a hearth database from a newer hearth (never downgraded)", async () => {
    const home = tempHome();
    const store = await openStore({ home });
    await store.close();
    const db = new Database(join(home, "state.db"));
    db.pragma(`application_id = ${HEARTH_APPLICATION_ID}`);
    db.pragma("user_version = 999");
    db.close();
    await expectRefused(home, "HEARTH_SCHEMA_TOO_NEW");
    await expectRefused(home, "HEARTH_SCHEMA_TOO_NEW", "reader");
  });
});

describe("creation (F1)", () => {
  it("creates the home 0700 and the database 0600, whatever the umask", async () => {
    const previous = process.umask(0);
    try {
      const home = tempHome();
      const store = await openStore({ home, profile: "work" });
      expect(statSync(home).mode & 0o777).toBe(0o700);
      expect(statSync(join(home, "profiles", "work")).mode & 0o777).toBe(0o700);
      expect(statSync(store.path).mode & 0o777).toBe(0o600);
      expect(store.path).toBe(join(home, "profiles", "work", "state.db"));
      await store.close();
    } finally {
      process.umask(previous);
    }
  });

  it("tightens an existing hearth home that others could read", async () => {
    const home = tempHome();
    mkdirSync(home, { recursive: true, mode: 0o755 });
    // A hearth home: it holds this user's config.json of hearth's sections (hearth never chmods a directory that is not).
    writeFileSync(join(home, "config.json"), '{"store":{}}\n', { mode: 0o600 });
    const store = await openStore({ home });
    expect(statSync(home).mode & 0o777).toBe(0o700);
    await store.close();
  });
});
