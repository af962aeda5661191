import { copyFileSync, readdirSync, readlinkSync, renameSync } from "node:fs";
import { expect, it } from "vitest";
import { openStore, type SqliteStore } from "../../../src/index.js";
import { internals } from "../../../src/store/sqlite/store.js";
import { tempHome } from "../../helpers/home.js";

/** This process's descriptors on `path` (closed ones skipped). */
function onFile(path: string): number {
  let n = 0;
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === path) n++;
    } catch {
      // closed while we looked
    }
  }
  return n;
}

// A writer store opens its read-only connection on its first read, and the
// per-profile checks a gateway runs at start and on timers are probes
// (src/store/sqlite/access.ts): an idle profile holds the writer's
// connection and the kernel locks' descriptor on its database, not a third
// (a gateway of 200 idle profiles held 200 read-only connections: 400
// descriptors and ~56 MB). Counted from /proc/self/fd.
it("a writer store's probes open no read-only connection and begin no write transaction; its first read does", async () => {
  const store = (await openStore({ home: tempHome() })) as SqliteStore;
  const db = store.path;
  const session = await store.sessions.create({ title: "probed" });
  const writer = store[internals].connection("writer");
  const transactions = writer.transactions;
  expect(onFile(db)).toBe(2);

  expect(await store.handoffs.failOrphans([], "gone")).toEqual([]);
  expect(await store.sessions.endIdle(60 * 60_000)).toEqual([]);
  expect(await store.handoffs.list("pending", 20)).toEqual([]);
  expect(await store.stats.latest()).toBeNull();
  expect(await store.meta.entries()).toBeTypeOf("object");
  expect(store[internals].uses("reader")).toBe(0);
  expect(writer.transactions).toBe(transactions);
  expect(onFile(db)).toBe(2);

  // A read a caller asked for opens the read-only connection; the writer serves none of it (C1).
  const writerUses = store[internals].uses("writer");
  expect((await store.sessions.get(session.id))?.title).toBe("probed");
  expect(store[internals].uses("reader")).toBeGreaterThan(0);
  expect(store[internals].uses("writer")).toBe(writerUses);
  expect(onFile(db)).toBe(3);
  // Once open, probes run on it too.
  await store.handoffs.failOrphans([], "gone");
  expect(store[internals].uses("writer")).toBe(writerUses);
  await store.close();
});

// The read-only connection opened late must open the files the process
// holds (F3): a database replaced under the writer before the first read is
// refused, and nothing is left open on the new file.
it("a first read after the database was replaced is refused with HEARTH_GENERATION_CHANGED", async () => {
  const home = tempHome();
  const store = (await openStore({ home })) as SqliteStore;
  await store.sessions.create({ title: "old" });
  const other = `${store.path}.other`;
  copyFileSync(store.path, other);
  renameSync(other, store.path);
  await expect(store.sessions.list()).rejects.toMatchObject({ code: "HEARTH_GENERATION_CHANGED" });
  expect(onFile(store.path)).toBe(0); // the replacement: nothing of ours on it
  await store.close();
});
