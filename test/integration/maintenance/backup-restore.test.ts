import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { runCli } from "../../helpers/cli.js";
import { tempHome } from "../../helpers/home.js";
import { startWorker } from "../../helpers/worker.js";

const BACKUP_NAME = /^default-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z\.db$/;
const mounts: string[] = [];

afterEach(() => {
  for (const dir of mounts.splice(0)) execFileSync("umount", [dir]);
});

const sha = (p: string) => createHash("sha256").update(readFileSync(p)).digest("hex");
const ls = (dir: string) => (existsSync(dir) ? readdirSync(dir).sort() : []);

/** A forensic copy's identity of a store that is one file: sha256 over name, size and bytes. */
function identityOf(bytes: Buffer): string {
  return createHash("sha256").update(`state.db\0${bytes.length}\0`).update(bytes).digest("hex");
}

/** Session titles, read from a database file's bytes in memory (creates no sidecar). */
function titlesIn(dbFile: string): string[] {
  const bytes = readFileSync(dbFile);
  bytes[18] = 1; // an in-memory copy cannot be in WAL mode
  bytes[19] = 1;
  const db = new Database(bytes);
  try {
    return db.prepare("SELECT title FROM sessions ORDER BY title").pluck().all() as string[];
  } finally {
    db.close();
  }
}

async function storeWith(home: string, titles: string[]): Promise<string> {
  const store = await openStore({ home });
  for (const title of titles) {
    const s = await store.sessions.create({ title });
    await store.messages.append(s.id, { role: "user", content: `in ${title}` });
  }
  await store.close();
  return store.path;
}

describe("hearth backup", () => {
  it("copies the store while a worker appends, as a verified 0600 <profile>-<stamp>.db", async () => {
    const home = tempHome();
    const store = await openStore({ home });
    const session = await store.sessions.create({ title: "busy" });
    await store.close();
    const writer = await startWorker({ HEARTH_PROCESS_KIND: "worker" });
    await writer.call("open", { home });
    writer
      .request("appendLoop", { sessionId: session.id, forever: true, prefix: "m" })
      .catch(() => undefined); // it ends when the worker is killed
    await writer.waitForAcks(50);
    const ackedBefore = [...writer.acks];

    const r = await runCli(["--json", "backup"], { home });
    const ackedAfter = writer.acks.length;
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout) as { path: string; bytes: number };
    expect(dirname(result.path)).toBe(join(home, "backups"));
    expect(basename(result.path)).toMatch(BACKUP_NAME);
    expect(ls(join(home, "backups"))).toEqual([basename(result.path)]);
    const st = statSync(result.path);
    expect(st.mode & 0o777).toBe(0o600);
    expect(st.size).toBe(result.bytes);
    // The writer kept committing while the backup command ran.
    expect(ackedAfter).toBeGreaterThan(ackedBefore.length);

    const copy = new Database(result.path, { readonly: true, fileMustExist: true });
    try {
      expect(copy.pragma("quick_check", { simple: true })).toBe("ok");
      const ids = new Set(
        copy
          .prepare("SELECT client_id FROM messages WHERE session_id = ?")
          .pluck()
          .all(session.id) as string[],
      );
      expect(ackedBefore.filter((id) => !ids.has(id))).toEqual([]);
      // One instant of a sequential writer: a gapless prefix m-0 .. m-(n-1).
      expect([...ids].sort()).toEqual(Array.from({ length: ids.size }, (_, i) => `m-${i}`).sort());
    } finally {
      copy.close();
    }
  });

  it("keeps the newest --keep backups and never counts or deletes staging debris", async () => {
    const home = tempHome();
    await storeWith(home, ["one"]);
    const backups = join(home, "backups");
    mkdirSync(join(backups, "forensic", "x"), { recursive: true, mode: 0o700 });
    const staging = join(backups, ".staging-default-1-2.tmp");
    writeFileSync(staging, "debris");

    const made: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await runCli(["--json", "backup", "--keep", "2"], { home });
      expect(r.code, r.stderr).toBe(0);
      const result = JSON.parse(r.stdout) as { path: string; removed: string[] };
      made.push(result.path);
      // Each run removes exactly the one that fell out of the newest two.
      expect(result.removed).toEqual(i < 2 ? [] : [made[i - 2]]);
    }
    const kept = ls(backups).filter((n) => BACKUP_NAME.test(n));
    expect(kept).toEqual(made.slice(2).map((p) => basename(p)));
    expect(readFileSync(staging, "utf8")).toBe("debris");
    expect(ls(join(backups, "forensic"))).toEqual(["x"]);
  });

  it("removes the staging copy of a backup killed before publishing (its pid is gone), keeps a live one's", async () => {
    const home = tempHome();
    await storeWith(home, ["one"]);
    const backups = join(home, "backups");
    const killed = await runCli(["backup"], {
      home,
      env: { HEARTH_FAILPOINTS: "backup.mid-publish=kill" },
    });
    expect(killed.signal).toBe("SIGKILL");
    const left = ls(backups).filter((n) => n.startsWith(".staging-"));
    expect(left).toHaveLength(1);
    // A staging file whose pid is in use (pid 1 lives) may be a backup running now: kept.
    const live = join(backups, ".staging-default-1-2.tmp");
    writeFileSync(live, "running");

    const next = await runCli(["--json", "backup"], { home });
    expect(next.code, next.stderr).toBe(0);
    // Each killed backup would otherwise leave a store-sized file forever (never listed, never removed).
    expect(ls(backups).filter((n) => n.startsWith(".staging-"))).toEqual([basename(live)]);
    expect(ls(backups).filter((n) => BACKUP_NAME.test(n))).toEqual([basename(next.json().path)]);
  });
});

describe("hearth restore", () => {
  it("round-trips: the added sessions go, the old ones come back, a forensic copy keeps the replaced store", async () => {
    const home = tempHome();
    const db = await storeWith(home, ["old-1", "old-2"]);
    const made = await runCli(["--json", "backup"], { home });
    expect(made.code, made.stderr).toBe(0);
    const backupFile = JSON.parse(made.stdout).path as string;
    await storeWith(home, ["added"]);
    expect(titlesIn(db)).toEqual(["added", "old-1", "old-2"]);
    // Quiet (every writer closed): the store is the database file alone.
    expect(ls(home).filter((n) => n.startsWith("state.db"))).toEqual(["state.db"]);
    const replacedBytes = readFileSync(db);
    const replaced = sha(db);
    const forensicRoot = join(home, "backups", "forensic");
    const restoreJson = async () => {
      const r = await runCli(["--json", "restore", backupFile, "--yes"], { home });
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as { path: string; forensicCopy: string };
    };

    const first = await restoreJson();
    expect(first.path).toBe(db);
    expect(titlesIn(db)).toEqual(["old-1", "old-2"]);
    expect(dirname(first.forensicCopy)).toBe(forensicRoot);
    const manifest = JSON.parse(readFileSync(join(first.forensicCopy, "manifest.json"), "utf8"));
    expect(manifest).toMatchObject({ profile: "default", dbPath: db });
    expect(manifest.files).toEqual([{ name: "state.db", bytes: replacedBytes.length }]);
    expect(manifest.identity).toBe(identityOf(replacedBytes));
    // The forensic copy is the replaced store, byte for byte.
    expect(sha(join(first.forensicCopy, "state.db"))).toBe(replaced);
    expect(titlesIn(join(first.forensicCopy, "state.db"))).toEqual(["added", "old-1", "old-2"]);

    // Replacing the restored store (untouched since) twice: the second copy is identical content.
    const restoredBytes = readFileSync(db);
    const identity = identityOf(restoredBytes);
    const second = await restoreJson();
    expect(second.forensicCopy).not.toBe(first.forensicCopy);
    const secondManifest = JSON.parse(
      readFileSync(join(second.forensicCopy, "manifest.json"), "utf8"),
    );
    expect(secondManifest.identity).toBe(identity);
    // Each restore appends its row to the audit trail (docs/security.md#audit-trail),
    // so a restored store is the backup plus that row, never the same bytes twice:
    // put the first restore's bytes back to replace identical content again.
    expect(sha(db)).not.toBe(createHash("sha256").update(restoredBytes).digest("hex"));
    expect(titlesIn(db)).toEqual(["old-1", "old-2"]);
    writeFileSync(db, restoredBytes);
    const third = await restoreJson();
    expect(third.forensicCopy).toBe(second.forensicCopy);
    expect(ls(forensicRoot)).toEqual(
      [basename(first.forensicCopy), basename(second.forensicCopy)].sort(),
    );

    const list = await runCli(["--json", "sessions", "list", "--all"], { home });
    const titles = JSON.parse(list.stdout)
      .items.map((s: { title: string }) => s.title)
      .sort();
    expect(titles).toEqual(["old-1", "old-2"]);
  });

  it("refuses without --yes and without a terminal (exit 2), changing nothing", async () => {
    const home = tempHome();
    const { db, backupFile } = await backedUpThenChanged(home);
    const before = sha(db);
    const files = ls(home);

    const r = await runCli(["--json", "restore", backupFile], { home });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stderr).error.code).toBe("HEARTH_USAGE");
    expect(sha(db)).toBe(before);
    expect(ls(home)).toEqual(files);
    expect(ls(join(home, "backups"))).toEqual([basename(backupFile)]);
    expect(titlesIn(db)).toEqual(["after", "keep"]);
  });

  it("refuses a file that is not SQLite with HEARTH_BACKUP_INVALID (exit 1), changing nothing", async () => {
    const home = tempHome();
    const { db, backupFile } = await backedUpThenChanged(home);
    const before = sha(db);
    const files = ls(home);

    const bogus = join(dirname(home), "not-a-store.db");
    writeFileSync(bogus, "this is not a database, only text long enough for a header. ".repeat(10));
    const r = await runCli(["--json", "restore", bogus, "--yes"], { home });
    expect(r.code).toBe(1);
    expect(sha(db)).toBe(before);
    expect(ls(home)).toEqual(files);
    expect(ls(join(home, "backups"))).toEqual([basename(backupFile)]);
    expect(JSON.parse(r.stderr).error.code).toBe("HEARTH_BACKUP_INVALID");
  });
});

/** A store with session "keep", backed up, then "after" added; every writer closed. */
async function backedUpThenChanged(home: string): Promise<{ db: string; backupFile: string }> {
  const db = await storeWith(home, ["keep"]);
  const made = await runCli(["--json", "backup"], { home });
  expect(made.code, made.stderr).toBe(0);
  await storeWith(home, ["after"]);
  return { db, backupFile: JSON.parse(made.stdout).path as string };
}

describe("hearth backup on a nearly full filesystem", () => {
  it("refuses with HEARTH_NO_SPACE (exit 1) and writes nothing into backups/", async (ctx) => {
    const home = tempHome();
    // A ~2 MB store, made on the ordinary disk and closed (one file, no sidecars).
    const source = join(dirname(home), "source");
    const store = await openStore({ home: source });
    const s = await store.sessions.create({ title: "big" });
    const text = "y".repeat(4000);
    await store.messages.appendBatch(
      s.id,
      Array.from({ length: 500 }, (_, i) => ({ role: "user" as const, content: `${i} ${text}` })),
    );
    await store.close();
    expect(statSync(store.path).size).toBeGreaterThan(2_000_000);

    const mnt = join(dirname(home), "small");
    mkdirSync(mnt);
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=3m,mode=0700", "tmpfs", mnt], {
        stdio: "pipe",
      });
    } catch (err) {
      ctx.skip(`cannot mount a 3 MiB tmpfs (needs root or CAP_SYS_ADMIN): ${String(err)}`);
    }
    mounts.push(mnt);
    const small = join(mnt, "home");
    mkdirSync(small, { mode: 0o700 });
    copyFileSync(store.path, join(small, "state.db"));

    const r = await runCli(["--json", "backup"], { home: small });
    expect(r.code).toBe(1);
    const { error } = JSON.parse(r.stderr);
    expect(error.code).toBe("HEARTH_NO_SPACE");
    expect(error.message).toContain(join(small, "backups"));
    expect(ls(join(small, "backups"))).toEqual([]);
    expect(ls(small).filter((n) => n.startsWith("state.db"))).toContain("state.db");
  });
});
