import { createHash } from "node:crypto";
import {
  closeSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  unlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { checkpointOffLoop } from "../../../src/store/sqlite/wal-sync/checkpointer.js";

// The checkpoint thread (src/store/sqlite/wal-sync/checkpoint-thread.ts) runs
// in the writer's process. SQLite's unix VFS gives every connection of a
// process to one database inode the same wal-index, so a connection the
// thread opens, or kept from its passes, after another program removed
// -wal and -shm still sees the removed WAL. Checkpointing it would write
// that WAL's frames into a database that a newer WAL may already build on;
// saving them is the writer's job, under the locks that make it safe
// (ghost-wal.ts). The thread checks the -wal and -shm the writer holds
// before every checkpoint, and these tests watch the database file's bytes.

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const key = (path: string) => {
  const { dev, ino } = statSync(path);
  return `${dev}:${ino}`;
};
const digest = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

/** A WAL database with frames the checkpoint has not copied yet, and the writer's keys. */
function walWithFrames() {
  const dir = mkdtempSync(join(tmpdir(), "hearth-ckpt-removed-"));
  dirs.push(dir);
  const path = join(dir, "state.db");
  const writer = new Database(path);
  writer.pragma("journal_mode = WAL");
  writer.pragma("wal_autocheckpoint = 0");
  writer.exec("CREATE TABLE t (x TEXT)");
  const insert = writer.prepare("INSERT INTO t (x) VALUES (?)");
  const fill = (n: number) => {
    for (let i = 0; i < n; i++) insert.run("x".repeat(500));
  };
  fill(200);
  const target = {
    path,
    key: key(path),
    walKey: key(`${path}-wal`),
    shmKey: key(`${path}-shm`),
    synchronous: "FULL",
  };
  return { path, writer, fill, target };
}

function removeSidecars(path: string) {
  unlinkSync(`${path}-wal`);
  unlinkSync(`${path}-shm`);
}

/** Passes on `target`, as the writer posts them. */
const passesJob = (target: ReturnType<typeof walWithFrames>["target"], maxPasses: number) =>
  checkpointOffLoop({
    kind: "passes",
    ...target,
    finalFrames: 0,
    growth: 1e9,
    maxPasses,
    done: new Int32Array(new SharedArrayBuffer(4)),
  });

/** The thread refused, naming the files, and the database file's bytes are as they were. */
function expectRefusedUnchanged(result: unknown, path: string, before: string) {
  expect(result).toMatchObject({ ok: false, message: expect.stringMatching(/no longer the file/) });
  expect(digest(path)).toBe(before);
}

const finalJob = { merge: 0, truncateAbove: -1, restartFrames: 1e9, readerWaitMs: 0 };

describe("the checkpoint thread and a removed WAL (issue 41)", () => {
  it("a final job whose passes kept a connection refuses once -wal and -shm were removed, and leaves the database file as it was", async () => {
    const { path, writer, fill, target } = walWithFrames();
    try {
      const passes = passesJob(target, 1);
      expect(await passes.reply).toMatchObject({ ok: true });
      fill(200); // frames only the WAL holds
      removeSidecars(path);
      const before = digest(path);
      const result = await checkpointOffLoop({
        kind: "final",
        passesId: passes.id,
        ...target,
        ...finalJob,
      }).reply;
      expectRefusedUnchanged(result, path, before);
    } finally {
      writer.close();
    }
  });

  it('passes asked for after -wal and -shm were removed refuse too, naming the files (SQLite alone answers a new connection "disk I/O error")', async () => {
    const { path, writer, target } = walWithFrames();
    try {
      removeSidecars(path);
      const before = digest(path);
      const result = await passesJob(target, 4).reply;
      expectRefusedUnchanged(result, path, before);
    } finally {
      writer.close();
    }
  });

  it("with the writer's -wal named through its descriptor (walLink, as a store posts it), a final job refuses once the -wal alone was removed", async () => {
    const { path, writer, fill, target } = walWithFrames();
    // The writer's descriptor on the -wal, as FileGuard keeps it: the thread shares this process's descriptors.
    const fd = openSync(`${path}-wal`, "r");
    try {
      const link = `/proc/self/fd/${fd}`;
      const withLink = {
        ...target,
        walKey: undefined,
        walLink: { link, name: readlinkSync(link) },
      };
      const passes = checkpointOffLoop({
        kind: "passes",
        ...withLink,
        finalFrames: 0,
        growth: 1e9,
        maxPasses: 1,
        done: new Int32Array(new SharedArrayBuffer(4)),
      });
      expect(await passes.reply).toMatchObject({ ok: true });
      fill(200); // frames only the WAL holds
      unlinkSync(`${path}-wal`); // the -shm stays: only the -wal's check can tell
      const before = digest(path);
      const result = await checkpointOffLoop({
        kind: "final",
        passesId: passes.id,
        ...withLink,
        ...finalJob,
      }).reply;
      expectRefusedUnchanged(result, path, before);
    } finally {
      closeSync(fd);
      writer.close();
    }
  });
});
