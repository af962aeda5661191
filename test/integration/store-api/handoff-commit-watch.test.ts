import { expect, it } from "vitest";
import { openStore, type SqliteStore } from "../../../src/index.js";
import { internals } from "../../../src/store/sqlite/store.js";
import { tempHome } from "../../helpers/home.js";
import { startWorker } from "../../helpers/worker.js";

const until = async (done: () => boolean) => {
  while (!done()) await new Promise((r) => setTimeout(r, 10));
};

// A SQLite store's handoff watch wakes its watcher only when some process
// committed (the wal-index header changed), read through the guard's -shm
// descriptor without a statement. The gateway used to query every profile's
// handoffs every gateway.handoffPollMs (4 queries a second per profile,
// idle); now its watcher polls when woken and every 5 s. Counted: wake-ups
// and reader statements.
it("the SQLite handoff watch is live, wakes on another process's commit, and runs no statement while nothing commits", async () => {
  const home = tempHome();
  const store = (await openStore({
    home,
    config: { gateway: { handoffPollMs: 10 } },
  })) as SqliteStore;
  const statements = () => store[internals].uses("reader") + store[internals].uses("writer");
  const session = await store.sessions.create({ title: "watched" });
  let wakes = 0;
  const live: boolean[] = [];
  const watch = await store.handoffs.watch({ wake: () => wakes++, live: (up) => live.push(up) });
  expect(live).toEqual([true]);

  // Nothing commits: however many looks, no wake-up and no statement.
  const before = statements();
  await new Promise((r) => setTimeout(r, 200));
  expect(wakes).toBe(0);
  expect(statements()).toBe(before);

  const other = await startWorker({ HEARTH_PROCESS_KIND: "worker" });
  await other.call("open", { home });
  await other.call("append", { sessionId: session.id, content: "a commit elsewhere" });
  await until(() => wakes > 0);
  expect(live).toEqual([true]);
  await watch.stop();
  await other.call("close");
  await store.close();
});
