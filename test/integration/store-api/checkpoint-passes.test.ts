import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openSqliteStore, tempHome } from "../../helpers/home.js";
import { type Call, traceFixture } from "../../helpers/strace.js";

// A checkpoint copies most of the WAL while the writer goes on committing
// (its passes, without the write lock), and only the rest under the write
// lock (src/store/sqlite/wal-sync/checkpoints.ts). The proof is a syscall trace of
// a real writer process: the checkpoint thread's copy into the database file
// and the loop's commits to the WAL, in the order the kernel saw them.

const FIXTURE = join(import.meta.dirname, "../../fixtures/off-loop-writer.mjs");

const isDbSync = (c: Call) =>
  (c.name === "fsync" || c.name === "fdatasync") && c.file.endsWith("state.db");

describe("checkpoint passes run beside the writer's commits", () => {
  it(
    "the loop commits to the WAL while the checkpoint thread copies pages into the database",
    { timeout: 60_000 },
    async () => {
      const { calls, main } = await traceFixture(
        FIXTURE,
        { home: tempHome(), syncOffLoop: true, count: 600, synchronous: "normal" },
        "pwrite64,fsync,fdatasync",
      );
      // Each checkpoint pass copies pages into the database file and ends
      // with an fsync of it: a copy is the thread's database writes between
      // two such fsyncs.
      const copies: Call[][] = [];
      let current: Call[] = [];
      for (const c of calls) {
        if (c.tid === main) continue;
        if (isDbSync(c)) {
          if (current.length > 0) copies.push(current);
          current = [];
        } else if (c.name === "pwrite64" && c.file.endsWith("state.db")) current.push(c);
      }
      expect(copies.length).toBeGreaterThan(2);
      const commits = calls.filter(
        (c) => c.tid === main && c.name === "pwrite64" && c.file.endsWith("state.db-wal"),
      );
      // Copies during which the loop's thread wrote a commit to the WAL.
      // Under the write lock for the whole checkpoint there would be none.
      const beside = copies.filter((copy) =>
        commits.some((c) => c.done > copy[0]!.done && c.done < copy.at(-1)!.done),
      );
      expect(beside.length).toBeGreaterThan(0);
    },
  );
});

describe("a structural operation of the writer's own process", () => {
  it("starts only once its checkpoint passes are over: a TRUNCATE checkpoint never finds one running", async () => {
    // A threshold of 16 pages: every few appends start passes, so most
    // bursts end with passes on the thread. A TRUNCATE checkpoint that ran
    // beside one would find the checkpoint lock taken ("busy").
    const store = await openSqliteStore({
      home: tempHome(),
      config: { durability: { synchronous: "normal", walAutocheckpointPages: 16 } },
    });
    try {
      const session = await store.sessions.create({ title: "gate" });
      const outcomes: string[] = [];
      for (let round = 0; round < 80; round++) {
        for (let i = 0; i < 12; i++) {
          await store.messages.append(session.id, {
            role: "user",
            content: `${round}.${i} ${"z".repeat(3000)}`,
          });
        }
        outcomes.push(await store.withStructuralGate("truncate", (ctx) => ctx.truncateWal()));
      }
      expect(outcomes.filter((o) => o !== "done")).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
