import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempHome } from "../../helpers/home.js";
import { run as runProcess } from "../../helpers/process.js";

// Since Linux 6.13 a stat that reads a file's timestamps makes the file's
// next write stamp a fine-grained time: a stat of the -wal between two
// commits makes the second commit's fsync write the -wal's inode too
// (src/files/guard.ts). hearth's own stats of the -wal are node's (statx;
// SQLite's, when the checkpoint thread opens a connection, are
// newfstatat), and after the writer is up only one is left per checkpoint:
// the final job's size check (TRUNCATE past journal_size_limit). The -wal's
// identity comes from the guard's descriptor as recorded when it was
// opened, and the thread checks the -wal's name through that descriptor's
// /proc/self/fd link (issue 44). The proof is a syscall trace of a real
// writer process at synchronous FULL, checkpointing every 64 frames.

const FIXTURE = join(import.meta.dirname, "../../fixtures/off-loop-writer.mjs");

describe("stats of the -wal beside the writer's commits", () => {
  it(
    "none on the writer's thread, and one per checkpoint connection on the checkpoint thread",
    { timeout: 120_000 },
    async () => {
      const home = tempHome();
      const out = join(home, "..", "trace.txt");
      const arg = { home, syncOffLoop: true, count: 400, synchronous: "full" };
      // Whole paths (-s 256): the stats by path name the file only in their string argument.
      const result = await runProcess("strace", [
        ...["-f", "-y", "-s", "256", "-e", "trace=write,statx,openat,readlink", "-o", out],
        ...[process.execPath, FIXTURE, JSON.stringify(arg)],
      ]);
      expect(result.code).toBe(0);
      const lines = readFileSync(out, "utf8").split("\n");
      // From the writer's first acknowledged write on (opening the store stats the -wal; that is not per commit).
      const from = lines.findIndex((l) => /write\(1<[^>]*>, "ack 0/.test(l));
      expect(from).toBeGreaterThan(0);
      const main = Number(/^(\d+)/.exec(lines[from]!)?.[1]);
      const run = lines.slice(from);
      const tid = (l: string) => Number(/^(\d+)/.exec(l)?.[1]);
      const walStat = (l: string) =>
        /\bstatx\((?:\d+<[^>]*state\.db-wal>|[^,]*, "[^"]*state\.db-wal")/.test(l);
      const walOpen = (l: string) => /\bopenat\([^,]*, "[^"]*state\.db-wal"/.test(l);
      const onMain = run.filter((l) => tid(l) === main);
      const onThreads = run.filter((l) => tid(l) !== main && !Number.isNaN(tid(l)));
      const threadOpens = onThreads.filter(walOpen).length;
      // The thread checkpointed many times: a connection (opening the -wal) per checkpoint.
      expect(threadOpens).toBeGreaterThan(5);
      // Before issue 44's change: two fstat of the -wal per checkpoint here (identity),
      // and two or three stats of it by path per checkpoint on the thread (sameFile).
      expect(onMain.filter(walStat)).toEqual([]);
      expect(onThreads.filter(walStat).length).toBeLessThanOrEqual(threadOpens);
      // The thread checked the -wal's name through the writer's descriptor.
      expect(
        onThreads.some((l) => /readlink\("\/proc\/self\/fd\/\d+", "[^"]*state\.db-wal"/.test(l)),
      ).toBe(true);
    },
  );
});
