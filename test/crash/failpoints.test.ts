import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { profileDir } from "../../src/config/paths.js";
import { LATEST_SCHEMA_VERSION, openStore } from "../../src/index.js";
import { raiseBackupFlag } from "../../src/process/backup-flag.js";
import { runCli } from "../helpers/cli.js";
import { tempHome } from "../helpers/home.js";
import { run as runChild } from "../helpers/process.js";
import { startWorker, type Worker } from "../helpers/worker.js";

// Each named failpoint (src/failpoints.ts) kills a real process at one
// precise instant; then the store is reopened, integrity-checked, and every
// acknowledged write is counted. Deterministic: no random timing.
const MIGRATE_NEXT = fileURLToPath(new URL("../fixtures/migrate-next.mjs", import.meta.url));

const env = (failpoints?: string) => ({ HEARTH_FAILPOINTS: failpoints ?? "" });
const run = (file: string, args: string[], failpoints?: string) =>
  runChild(process.execPath, [file, ...args], { env: env(failpoints) });
const hearth = (args: string[], failpoints?: string) => runCli(args, { env: env(failpoints) });
const sha = (p: string) => createHash("sha256").update(readFileSync(p)).digest("hex");

function integrity(path: string): string {
  const db = new Database(path, { readonly: true });
  try {
    return String(db.pragma("integrity_check", { simple: true }));
  } finally {
    db.close();
  }
}

/** A closed store with one session of `n` messages; returns its home, path and session id. */
async function seeded(n = 0): Promise<{ home: string; path: string; sessionId: string }> {
  const home = tempHome();
  const store = await openStore({ home });
  const s = await store.sessions.create({ title: "crash" });
  for (let i = 0; i < n; i++) {
    await store.messages.append(s.id, { role: "user", content: `hello ${i} ${"x".repeat(60)}` });
  }
  await store.close();
  return { home, path: store.path, sessionId: s.id };
}

async function storedClientIds(home: string, sessionId: string): Promise<string[]> {
  const store = await openStore({ home });
  try {
    return (await store.messages.load(sessionId)).map((m) => m.clientId ?? "");
  } finally {
    await store.close();
  }
}

/** Run 10 appends; resolve with the signal that ended the worker, or "finished" when it never died. */
async function killedDuringLoop(writer: Worker, sessionId: string): Promise<string | null> {
  const loop = writer.request("appendLoop", { sessionId, count: 10, prefix: "w" });
  return Promise.race([
    writer.exited.then((e) => e.signal),
    loop.then(
      () => "finished",
      () => writer.exited.then((e) => e.signal),
    ),
  ]);
}

describe("named failpoints: a kill at each precise instant loses nothing acknowledged", () => {
  // Both kill a write that committed but was never acknowledged: after COMMIT
  // returned, and (durability.syncOffLoop) before hearth's own WAL fsync. The
  // page cache outlives the process, so that write is there too.
  it.each([
    "write.after-commit",
    "write.before-fsync",
  ])("%s: the write that committed but was never acknowledged is there, every acknowledged one too", async (point) => {
    const { home, path, sessionId } = await seeded();
    // The backup flag up sends every commit's fsync to the pool, where write.before-fsync is.
    const lower = await raiseBackupFlag(profileDir(home, "default"));
    const writer = await startWorker({ HEARTH_FAILPOINTS: `${point}=kill@5` });
    await writer.call("open", { home });
    expect(await killedDuringLoop(writer, sessionId)).toBe("SIGKILL");
    lower();
    expect(writer.acks).toEqual(["w-0", "w-1", "w-2", "w-3"]);
    expect(integrity(path)).toBe("ok");
    expect(await storedClientIds(home, sessionId)).toEqual(["w-0", "w-1", "w-2", "w-3", "w-4"]);
  });

  it("write.before-commit: the write killed before COMMIT is not there; every acknowledged one is", async () => {
    const { home, path, sessionId } = await seeded();
    const writer = await startWorker({ HEARTH_FAILPOINTS: "write.before-commit=kill@5" });
    await writer.call("open", { home });
    expect(await killedDuringLoop(writer, sessionId)).toBe("SIGKILL");
    expect(writer.acks).toEqual(["w-0", "w-1", "w-2", "w-3"]);
    expect(integrity(path)).toBe("ok");
    expect(await storedClientIds(home, sessionId)).toEqual(writer.acks);
  });

  it("wal.fsync=fail: a write whose WAL fsync fails is refused with HEARTH_SYNC_FAILED, never acknowledged; the next write goes through", async () => {
    const { home, path, sessionId } = await seeded();
    // The backup flag up sends every commit's fsync to the pool, where wal.fsync is.
    const lower = await raiseBackupFlag(profileDir(home, "default"));
    const writer = await startWorker({ HEARTH_FAILPOINTS: "wal.fsync=fail@3" });
    await writer.call("open", { home });
    const loop = await writer.request("appendLoop", { sessionId, count: 5, prefix: "w" });
    expect(loop.ok).toBe(false);
    expect(loop.error?.code).toBe("HEARTH_SYNC_FAILED");
    expect(writer.acks).toEqual(["w-0", "w-1"]);
    await writer.call("append", { sessionId, content: "after", clientId: "after" });
    await writer.call("close");
    lower();
    expect(integrity(path)).toBe("ok");
    // It committed; only its durability against power loss is in doubt, as the error says.
    expect(await storedClientIds(home, sessionId)).toEqual(["w-0", "w-1", "w-2", "after"]);
  });

  it("backup.mid-publish: no half-published backup is ever listed, and the next backup works", async () => {
    const { home, path } = await seeded(30);
    const killed = await hearth(["--home", home, "backup"], "backup.mid-publish=kill");
    expect(killed.signal).toBe("SIGKILL");
    const dir = join(home, "backups");
    // The staged copy is left under a name outside the backup pattern; nothing is listed.
    const listed = () => readdirSync(dir).filter((n) => /^default-.*\.db$/.test(n));
    expect(listed()).toEqual([]);
    expect(readdirSync(dir).some((n) => n.startsWith(".staging-"))).toBe(true);
    const next = await hearth(["--home", home, "--json", "backup"]);
    expect(next.code, next.stderr).toBe(0);
    expect(listed()).toHaveLength(1);
    expect(integrity(JSON.parse(next.stdout).path)).toBe("ok");
    expect(integrity(path)).toBe("ok");
  });

  it("repair.mid-promote: the forensic copy holds the damaged store byte for byte, and repair then finishes", async () => {
    const { home, path } = await seeded(200);
    const raw = new Database(path);
    raw.unsafeMode(true);
    raw.exec("UPDATE messages_fts_data SET block = randomblob(50) WHERE id > 10");
    raw.close();
    const damaged = sha(path);
    const killed = await hearth(["--home", home, "sessions", "repair"], "repair.mid-promote=kill");
    expect(killed.signal).toBe("SIGKILL");
    const forensic = join(home, "backups", "forensic");
    const copies = readdirSync(forensic).filter((n) => !n.startsWith("."));
    expect(copies).toHaveLength(1);
    expect(sha(join(forensic, copies[0]!, "state.db"))).toBe(damaged);
    // The original is still in place (the rename never happened), readable, and repair completes.
    expect(sha(path)).toBe(damaged);
    const again = await hearth(["--home", home, "--json", "sessions", "repair"]);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).strategy).toBe("fts-rebuild");
    expect(integrity(path)).toBe("ok");
    const store = await openStore({ home, role: "reader" });
    expect((await store.counts()).messages).toBe(200);
    expect(await store.search("hello")).not.toHaveLength(0);
    await store.close();
  });

  it("migrate.mid-migration: the migration rolls back whole, the store opens, and the migration then completes", async () => {
    const { home, path } = await seeded(10);
    const killed = await run(MIGRATE_NEXT, [home], "migrate.mid-migration=kill");
    expect(killed.signal).toBe("SIGKILL");
    expect(integrity(path)).toBe("ok");
    const check = new Database(path, { readonly: true });
    expect(check.pragma("user_version", { simple: true })).toBe(LATEST_SCHEMA_VERSION);
    expect(
      check.prepare("SELECT count(*) AS n FROM sqlite_schema WHERE name = 'extra'").get(),
    ).toEqual({ n: 0 });
    check.close();
    const store = await openStore({ home });
    expect((await store.counts()).messages).toBe(10);
    await store.close();
    const done = await run(MIGRATE_NEXT, [home]);
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout)).toEqual({
      migrated: { from: LATEST_SCHEMA_VERSION, to: LATEST_SCHEMA_VERSION + 1 },
    });
  });

  it("refuses a misspelled failpoint instead of never firing it", async () => {
    const { home } = await seeded();
    const r = await hearth(["--home", home, "backup"], "backup.mid-publsh=kill");
    expect(r.signal).toBeNull();
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("HEARTH_FAILPOINTS");
  });
});
