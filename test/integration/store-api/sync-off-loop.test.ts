import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openSqliteStore, tempHome } from "../../helpers/home.js";
import { printedJson, run } from "../../helpers/process.js";
import { type Call, traceFixture } from "../../helpers/strace.js";

// durability.syncOffLoop (src/store/sqlite/wal-sync): a write's WAL fsync and the
// WAL checkpoints run off the event loop, and a write still resolves only
// after its fsync. The proof is a syscall trace of a real writer process:
// which thread called fsync on which file, and where each acknowledgement
// falls. strace is installed by .ci/run.

const FIXTURE = join(import.meta.dirname, "../../fixtures/off-loop-writer.mjs");

async function traceWriter(
  syncOffLoop: boolean,
  count: number,
  {
    busy = false,
    // null: the configured default
    checkpointOffLoop = "with-fsync" as string | null,
    home = tempHome(),
  } = {},
) {
  const { result, calls, acks, main } = await traceFixture(
    FIXTURE,
    { home, syncOffLoop, count, busy, checkpointOffLoop: checkpointOffLoop ?? undefined },
    "pwrite64,fsync,fdatasync",
  );
  const start = calls.find((c) => c.name === "write" && c.text.includes('"start')!)!.done;
  const end = acks.at(-1)!.done;
  const inRun = calls.filter((c) => c.done > start && c.done <= end);
  const commits = printedJson(result.stdout, "offloop");
  return { home, calls: inRun, acks, main, commits };
}

/** Every checkpoint on the thread, even on a quiet loop: for the tests of the thread itself. */
const THREAD = { checkpointOffLoop: "always" };

const isSync = (c: Call) => c.name === "fsync" || c.name === "fdatasync";

/** The fixture ended well and its WAL (`wal <bytes>`, its largest) stayed bounded. */
function expectBoundedWal(
  result: { code: number | null; stdout: string },
  bound = 2 * 1024 * 1024,
): void {
  expect(result.code).toBe(0);
  const wal = Number(/^wal (\d+)$/m.exec(result.stdout)?.[1]);
  // 4 thresholds of 64 pages are 1 MiB; a commit's own frames come on top.
  expect(wal).toBeGreaterThan(0);
  expect(wal).toBeLessThan(bound);
}

describe("durability.syncOffLoop: fsync and checkpoints off the event loop (issue 15)", () => {
  it(
    "while the event loop has other work, its thread never fsyncs the store, and every write resolves after an fsync of the WAL",
    { timeout: 60_000 },
    async () => {
      const { calls, acks, main, commits } = await traceWriter(true, 300, { busy: true });
      expect(commits["busy-loop"]).toBeGreaterThan(200);
      // The first policy window (100 ms) measures the loop before it moves
      // the fsync: judge the run from the 50th acknowledgement on.
      const from = acks[50]!.done;
      const syncs = calls.filter((c) => isSync(c) && c.done > from);
      // Nothing on the loop's thread waits for the disk.
      expect(syncs.filter((c) => c.tid === main)).toEqual([]);
      // The checkpoints ran (their fsync of the database file), on a thread.
      expect(syncs.some((c) => c.file.endsWith("state.db"))).toBe(true);
      // Each acknowledgement comes after a completed fsync of the WAL that
      // began after that write's commit reached the WAL.
      for (const ack of acks.slice(51)) {
        const commit = calls
          .filter(
            (c) =>
              c.tid === main &&
              c.name === "pwrite64" &&
              c.file.endsWith("-wal") &&
              c.done < ack.done,
          )
          .at(-1)!;
        expect(commit).toBeDefined();
        const covering = syncs.filter(
          (c) => c.file.endsWith("-wal") && c.done > commit.done && c.done < ack.done,
        );
        expect(
          covering.length,
          `no fsync of the WAL between ${commit.text} and ${ack.text}`,
        ).toBeGreaterThan(0);
      }
    },
  );

  /** A quiet writer's trace: its commits' fsyncs stayed in SQLite's commit, on the loop's thread. */
  async function quietWriter(checkpointOffLoop: string | null, count = 300) {
    // On tmpfs, where an fsync never takes 20 ms: under strace in a loaded
    // CI run on disk, one fsync that slow sent every commit of the run off
    // the loop ("slow-disk": 3 of 301 commits stayed), and nothing was left to judge.
    const home = tempHome(existsSync("/dev/shm") ? "/dev/shm" : undefined);
    const trace = await traceWriter(true, count, { checkpointOffLoop, home });
    const { calls, main, commits } = trace;
    const syncs = calls.filter(isSync);
    // A loop that only writes is not judged busy: its commits' own time is
    // not counted as other work (counted, nearly every commit would be).
    // Busy is judged from wall-clock time, though: with the CPUs taken by
    // other processes, windows read busy (two busy loops beside: 49 to 83 of
    // 301), and a bound here failed on load, not on the claim. So it is not
    // bounded here: the callers judge on the commits that stayed on the loop
    // ("with-fsync" asks for nearly all, or says the machine is too loaded).
    // Its commits fsynced on the loop, unless an fsync took 20 ms or more
    // (a loaded test machine can do that): then the next ones leave it for a
    // while ("slow-disk").
    const busy = commits["busy-loop"] ?? 0;
    const quietCommits = commits.loop ?? 0;
    expect(quietCommits + (commits["slow-disk"] ?? 0) + busy).toBe(count + 1); // the session, the writes
    // Each commit on the loop fsynced inside the commit, on the loop's thread.
    // (None may have stayed on a machine whose CPUs other processes took: the
    // callers judge how many did, not this run alone.)
    const walOnLoop = syncs.filter((c) => c.tid === main && c.file.endsWith("-wal"));
    expect(walOnLoop.length).toBeGreaterThanOrEqual(quietCommits - 1); // the session's came before the trace window
    // The checkpoints' fsyncs of the database file, by thread.
    const dbSyncs = syncs.filter((c) => c.file.endsWith("state.db"));
    // From the thread's first checkpoint on, the thread is up.
    const threadUp = dbSyncs.find((c) => c.tid !== main)?.done ?? Number.POSITIVE_INFINITY;
    return {
      onLoop: dbSyncs.filter((c) => c.tid === main).length,
      onLoopWhileUp: dbSyncs.filter((c) => c.tid === main && c.done > threadUp).length,
      elsewhere: dbSyncs.filter((c) => c.tid !== main).length,
      quietCommits,
    };
  }

  it(
    'on a quiet event loop SQLite fsyncs and checkpoints inside the commit, as without hearth (checkpointOffLoop "with-fsync")',
    // Up to three traced runs: one took 15–25 s with two busy loops beside.
    { timeout: 180_000 },
    async (ctx) => {
      // 300 writes of 3 KB cross the 64-page threshold about 25 times. A
      // commit whose fsync the policy sends off the loop (a busy window, or
      // a commit of 20 ms or more: then every commit for 10 s) sends its
      // checkpoint to the thread too, so the claim is judged on a run
      // whose commits nearly all stayed on the loop: up to three tries. On
      // a machine so loaded that none is (CPU starvation makes commits
      // slow even on tmpfs: 2 of 301 with two busy loops beside), it cannot
      // be judged, and the test says so rather than pass.
      let run = await quietWriter("with-fsync");
      for (let tries = 1; run.quietCommits < 290 && tries < 3; tries++) {
        const next = await quietWriter("with-fsync");
        if (next.quietCommits > run.quietCommits) run = next;
      }
      if (run.quietCommits < 290)
        ctx.skip(
          `too loaded to judge: at best ${run.quietCommits} of 301 commits stayed on the loop`,
        );
      expect(run.onLoop).toBeGreaterThan(10);
      expect(run.onLoop).toBeGreaterThan(run.elsewhere);
    },
  );

  it(
    'with checkpointOffLoop "always", a quiet loop fsyncs inside the commit and every checkpoint still leaves the loop',
    { timeout: 180_000 },
    async () => {
      // The writer never yields to the event loop here, and still sees the
      // thread come up (an atomic flag, not an event). Until it is up, a
      // WAL past OVERDUE_THRESHOLDS is checkpointed by the writer itself.
      const { onLoop, elsewhere } = await quietWriter("always");
      expect(elsewhere).toBeGreaterThan(onLoop);
    },
  );

  it(
    "by default no checkpoint runs on the writer's thread once the checkpoint thread is up, however quiet the loop (issue 44)",
    { timeout: 180_000 },
    async () => {
      // 600 writes of 3 KB cross the 64-page threshold about 50 times. A
      // checkpoint on the writer's connection fsyncs the database file on
      // the loop's thread (SQLite's automatic one inside a commit, or the
      // fallback of an overdue WAL); the thread's on another. Before the
      // thread is up the fallback may run there; never after.
      const { onLoop, onLoopWhileUp, elsewhere } = await quietWriter(null, 600);
      const where = `${onLoop} fsyncs of the database file on the writer's thread, ${elsewhere} on others`;
      expect(elsewhere, where).toBeGreaterThan(10);
      expect(onLoopWhileUp).toBe(0);
    },
  );

  it(
    "with syncOffLoop false, SQLite fsyncs inside the commit, on the loop's thread (the trace tells the two apart)",
    { timeout: 60_000 },
    async () => {
      const { calls, main } = await traceWriter(false, 100);
      const onLoop = calls.filter((c) => isSync(c) && c.tid === main);
      expect(onLoop.some((c) => c.file.endsWith("-wal"))).toBe(true);
    },
  );

  // Timeouts of 180 s on the tests of several fixture runs each: 17–59 s
  // beside two busy loops on 2 CPUs (load ~25), the last one a second short
  // of the default 60 s.
  it(
    "close() right after the first checkpoint was asked for completes while the thread is still starting",
    {
      timeout: 180_000,
    },
    async () => {
      // 30 writes cross the 64-page threshold a few writes before close(),
      // which awaits that checkpoint while its thread starts. A thread
      // unref'd during its start left nothing holding the process open: the
      // process ended with exit 13 (unsettled top-level await) before close()
      // was done.
      for (let i = 0; i < 3; i++) {
        const home = tempHome();
        const result = await run(process.execPath, [
          FIXTURE,
          JSON.stringify({ home, syncOffLoop: true, count: 30, checkpointOffLoop: "always" }),
        ]);
        expect(result.stderr).toBe("");
        expect(result.code).toBe(0);
        expect(result.stdout.trim().split("\n").at(-1)).toBe("closed");
      }
    },
  );

  it(
    "a writer that never yields to the event loop still keeps its WAL bounded while the thread starts",
    {
      timeout: 180_000,
    },
    async () => {
      // At NORMAL a write resolves without an fsync to wait for, so a loop of
      // appends runs on resolved promises alone and never lets the thread's
      // "ready" event in: its checkpoint never ran, and these 2,000 writes grew
      // the WAL to 124 MiB. Past OVERDUE_THRESHOLDS × 64 pages the writer now
      // checkpoints on its own connection.
      const home = tempHome();
      const result = await run(process.execPath, [
        FIXTURE,
        JSON.stringify({
          home,
          syncOffLoop: true,
          count: 2000,
          synchronous: "normal",
          measureWal: true,
        }),
      ]);
      expect(result.stderr).toBe("");
      expectBoundedWal(result);
    },
  );

  it(
    "a checkpoint thread that never comes up does not let the WAL grow: the writer checkpoints itself",
    {
      timeout: 180_000,
    },
    async () => {
      // Every checkpoint thread exits before it says it is up (failpoint).
      // Without the writer's own checkpoint past OVERDUE_THRESHOLDS, these
      // 2,000 writes grew the WAL without bound. The writer takes the merges
      // over once the thread has died twice, and a thread is started again at
      // most once a second: the run lasts 4.5 s at least (on an idle machine
      // 2,000 writes took under one, so only one thread had started; at 2.5 s
      // a clean-clone CI run still saw the thread owning the merges).
      const home = tempHome();
      const result = await run(
        process.execPath,
        [
          FIXTURE,
          JSON.stringify({
            home,
            syncOffLoop: true,
            count: 2000,
            minMs: 4500,
            measureWal: true,
            ...THREAD,
          }),
        ],
        { env: { ...process.env, HEARTH_FAILPOINTS: "checkpoint.thread-start=fail" } },
      );
      // Each thread said so on its way out (a line per start, a second apart at most).
      const lines = result.stderr.trim().split("\n");
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines)
        expect(JSON.parse(line)).toMatchObject({ event: "failpoint.fired" });
      expectBoundedWal(result);
      // Nor the search index's merge debt: without a thread to merge it, the writer does.
      const merges = printedJson(result.stdout, "merges");
      expect(merges).toMatchObject({ by: "writer", failed: 0, lastError: null });
      expect(merges.merged).toBeGreaterThan(0);
    },
  );

  it.each([
    ["in the middle of their passes", "checkpoint.mid-passes"],
    ["in their final job, under the write lock", "checkpoint.in-final"],
  ])(
    "checkpoint threads that die %s lose no write, hold no close, leave the WAL bounded and the merges to the writer",
    { timeout: 180_000 },
    async (_where, point) => {
      // Each checkpoint thread exits there (failpoint; a thread counts its
      // own hits), holding a connection and a checkpoint half done. The
      // writer's wait for the thread must end with it (or close would
      // hang), the next threshold starts a new one, and while none
      // finishes, the writer's own checkpoint bounds the WAL. At the final
      // job, the passes before it have each replied: a thread that answers
      // some jobs and dies in every final one still never merges.
      const home = tempHome();
      const result = await run(
        process.execPath,
        [
          FIXTURE,
          JSON.stringify({ home, syncOffLoop: true, count: 2000, measureWal: true, ...THREAD }),
        ],
        { env: { ...process.env, HEARTH_FAILPOINTS: `${point}=fail` } },
      );
      const fired = result.stderr
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { event: string; name: string });
      // More than one thread got that far: each death was followed by a new thread.
      expect(fired.length).toBeGreaterThan(1);
      for (const f of fired) expect(f).toMatchObject({ event: "failpoint.fired", name: point });
      // A dead thread's passes count as running until the writer hears of
      // the death (at its next wait for the lock), so the WAL runs a few
      // thresholds longer than with a live thread: 1.97–2.27 MB in 18 runs
      // with checkpoint.mid-passes on a quiet machine, but 4.3–4.9 MB when
      // the 2 CPUs ran at load 8–13 (the thread's death and the writer's
      // notice further apart). Without checkpoints the same 2,000 appends
      // leave a 131 MB WAL (walAutocheckpointPages 1,000,000), so 8 MiB is
      // still a bound that only a working checkpoint meets.
      expectBoundedWal(result, 8 * 1024 * 1024);
      // No final job ever finishes, so nor would a merge: the writer merges.
      const merges = printedJson(result.stdout, "merges");
      expect(merges).toMatchObject({ by: "writer", failed: 0, lastError: null });
      expect(merges.merged).toBeGreaterThan(0);
      expect(result.stdout).toMatch(/^rows 2000$/m);
      expect(result.stdout.trim().split("\n").at(-1)).toBe("closed");
    },
  );

  it("checkpoints on the thread keep the WAL bounded, and durability() reads the live state", async () => {
    const home = tempHome();
    const store = await openSqliteStore({
      home,
      // A WAL that starts over is cut back to 256 KiB, so its size shows
      // whether checkpoints keep up.
      config: {
        durability: {
          walAutocheckpointPages: 100,
          journalSizeLimitBytes: 256 * 1024,
          checkpointOffLoop: "always",
        },
      },
    });
    try {
      const report = await store.durability();
      expect(report.offLoop).toEqual({
        fsync: true,
        checkpoint: true,
        lastFsync: null,
        lastCheckpoint: null,
        commits: {},
      });
      expect(report.synchronous).toEqual({ configured: "full", actual: "full" });
      expect(report.walAutocheckpointPages).toBe(100);
      const session = await store.sessions.create({ title: "bounded" });
      const body = "y".repeat(6000);
      let largest = 0;
      for (let i = 0; i < 1000; i++) {
        await store.messages.append(session.id, { role: "user", content: `${i} ${body}` });
        // The first 500 let the thread start: writers do not wait for that
        // (checkpointThreadReady), so the WAL may grow meanwhile.
        if (i >= 500) largest = Math.max(largest, statSync(`${store.path}-wal`).size);
      }
      // 1,000 messages of 6 KB are over 6 MB of WAL without checkpoints (3 MB
      // in the 500 judged alone); the thread's checkpoints let it start over
      // every ~100 pages. (1,500 before: the last 500 crossed nothing new.)
      expect(largest).toBeLessThan(2 * 1024 * 1024);
      // durability() reads the writer's live record: every commit counted
      // once, by where its fsync ran, and the last one among them. Where
      // that was depends on the machine: SQLite fsyncs inside the commit of
      // a loop that only writes, unless an fsync of 20 ms or more sent the
      // next 10 s to the pool ("slow-disk"), or the CPUs were so taken that
      // a window of wall-clock time read busy ("busy-loop": a CI run on a
      // loaded host had one). A backup never ran here.
      const { lastFsync, lastCheckpoint, commits } = (await store.durability()).offLoop;
      expect([
        { on: "loop", reason: null },
        { on: "pool", reason: "slow-disk" },
        { on: "pool", reason: "busy-loop" },
      ]).toContainEqual(lastFsync);
      expect(commits[lastFsync?.reason ?? "loop"]).toBeGreaterThan(0);
      expect(commits.backup).toBeUndefined();
      const counted = Object.values(commits).reduce((sum, n) => sum + (n ?? 0), 0);
      expect(counted).toBe(1001); // the session, the messages
      expect(lastCheckpoint).toBe("thread");
    } finally {
      await store.close();
    }
  });

  it("off: durability() says so, and the writer keeps SQLite's own automatic checkpoint", async () => {
    const store = await openSqliteStore({
      home: tempHome(),
      config: { durability: { syncOffLoop: false, walAutocheckpointPages: 250 } },
    });
    try {
      const report = await store.durability();
      expect(report.offLoop).toEqual({
        fsync: false,
        checkpoint: false,
        lastFsync: null,
        lastCheckpoint: null,
        commits: {},
      });
      expect(report.walAutocheckpointPages).toBe(250);
    } finally {
      await store.close();
    }
  });

  it("at NORMAL only the checkpoint leaves the loop (there is no per-commit fsync to move)", async () => {
    const store = await openSqliteStore({
      home: tempHome(),
      config: { durability: { synchronous: "normal" } },
    });
    try {
      const report = await store.durability();
      expect(report.offLoop).toEqual({
        fsync: false,
        checkpoint: true,
        lastFsync: null,
        lastCheckpoint: null,
        commits: {},
      });
      expect(report.synchronous.actual).toBe("normal");
    } finally {
      await store.close();
    }
  });
});
