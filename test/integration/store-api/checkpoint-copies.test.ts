import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempHome } from "../../helpers/home.js";
import { run } from "../../helpers/process.js";
import { type Call, parseTrace } from "../../helpers/strace.js";

// What the checkpoint thread copies into the database file (issue 44). A
// lone appender's WAL of 1,000 frames holds ~50 distinct pages: the same
// few (a session's row, the right edge of each index, the search index's
// structure) again and again. Passes before the final job copied those
// pages once in a pass and again in the final job (the writer changed them
// meanwhile): 1.2 pages per append against 0.95 for SQLite's own
// checkpoints. A checkpoint whose whole copy is no larger than what the
// final job may copy after passes now runs the final job alone
// (src/store/sqlite/wal-sync/checkpoints.ts). The proof is a syscall trace of
// real writer processes at synchronous FULL, hearth's and a raw
// better-sqlite3 writer's doing the same appends.

const FIXTURE = join(import.meta.dirname, "../../fixtures/checkpoint-copies.mjs");
const COUNT = 1500;

const isSync = (c: Call) => c.name === "fsync" || c.name === "fdatasync";
const onWal = (c: Call) => c.file.endsWith("state.db-wal");
const onDb = (c: Call) => c.file.endsWith("state.db");

async function traced(kind: "hearth" | "raw") {
  const home = tempHome();
  const out = join(home, "..", `trace-${kind}.txt`);
  const result = await run("strace", [
    ...["-f", "-y", "-s", "12", "-e", "trace=pwrite64,fsync,fdatasync", "-o", out],
    ...[process.execPath, FIXTURE, JSON.stringify({ home, count: COUNT, kind })],
  ]);
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  expect(result.stdout).toMatch(/^done /m);
  return parseTrace(readFileSync(out, "utf8"));
}

describe("the checkpoint thread's copies into the database", () => {
  it(
    "a lone appender's checkpoints copy no more pages than SQLite's own, each with one WAL fsync",
    { timeout: 180_000 },
    async () => {
      const hearth = await traced("hearth");
      const raw = await traced("raw");
      const copies = (calls: Call[]) =>
        calls.filter((c) => c.name === "pwrite64" && onDb(c)).length;
      // The event loop's thread wrote the WAL's frames: the writer.
      const tids = new Map<number, number>();
      for (const c of hearth)
        if (c.name === "pwrite64" && onWal(c)) tids.set(c.tid, (tids.get(c.tid) ?? 0) + 1);
      const main = [...tids.entries()].sort((a, b) => b[1] - a[1])[0]![0];
      const thread = hearth.filter((c) => c.tid !== main);
      const dbSyncs = thread.filter((c) => isSync(c) && onDb(c)).length;
      const walSyncs = thread.filter((c) => isSync(c) && onWal(c)).length;
      // The thread checkpointed, whole (a database fsync each), a dozen times or more.
      expect(dbSyncs).toBeGreaterThanOrEqual(10);
      // One WAL fsync per checkpoint: the one before its copy. Passes made
      // one more each (the passes' own, then the final job's).
      expect(walSyncs).toBeLessThanOrEqual(dbSyncs + 1);
      // Pages copied, all threads (the stores' creation and closing
      // included, alike on both sides): within 10 % of SQLite's own.
      const hearthCopies = copies(hearth);
      const rawCopies = copies(raw);
      expect(rawCopies).toBeGreaterThan(0);
      expect(hearthCopies / rawCopies).toBeLessThanOrEqual(1.1);
    },
  );
});
