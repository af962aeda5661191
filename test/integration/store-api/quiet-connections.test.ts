/**
 * A connection nobody uses gives its page cache back (Connection.rest()):
 * a store just opened rests until its first call, and a connection that
 * served nothing for a whole tick of the sweep rests. At rest SQLite's
 * cache is 2 pages (below 3 it takes no 20-page block up front), and the
 * first use puts the configured size back. Read here from SQLite itself,
 * through the driver handle, which does not wake the connection.
 */
import { statSync } from "node:fs";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { Connection } from "../../../src/store/sqlite/connection.js";
import { QuietConnections, sweepQuiet } from "../../../src/store/sqlite/quiet-connections.js";
import { findEntry } from "../../../src/store/sqlite/registry.js";
import type { SqliteStore } from "../../../src/store/sqlite/store.js";
import { openSqliteStore, tempHome } from "../../helpers/home.js";

const stores: SqliteStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

async function opened() {
  const store = await openSqliteStore({ home: tempHome() });
  stores.push(store);
  const { dev, ino } = statSync(store.path);
  const writer = findEntry(`${dev}:${ino}`)!.connection("writer")!;
  return { store, writer };
}

/** SQLite's cache size on this connection, asked without waking it. */
function cacheSize(conn: Connection): number {
  const handle = (conn as unknown as { handle: Database.Database }).handle;
  return Number(handle.pragma("cache_size", { simple: true }));
}

/** The cache size SQLite gives a connection on its own (the configured one: hearth sets none). */
function defaultCacheSize(path: string): number {
  const db = new Database(path, { readonly: true });
  try {
    return Number(db.pragma("cache_size", { simple: true }));
  } finally {
    db.close();
  }
}

describe("quiet connections rest", () => {
  it("a store just opened holds its writer at rest until its first call, then at its configured cache", async () => {
    const { store, writer } = await opened();
    expect(writer.resting).toBe(true);
    expect(cacheSize(writer)).toBe(2);

    const session = await store.sessions.create({ title: "first call" });
    await store.messages.append(session.id, { role: "user", content: "wakes the writer" });
    expect(writer.resting).toBe(false);
    expect(cacheSize(writer)).toBe(defaultCacheSize(store.path));
    expect((await store.messages.load(session.id)).map((m) => m.content)).toEqual([
      "wakes the writer",
    ]);
  });

  it("a connection that served nothing for a whole tick rests; one used within the tick does not", async () => {
    const { store, writer } = await opened();
    const session = await store.sessions.create({ title: "sweep" });
    expect(writer.resting).toBe(false);
    const sweep = new QuietConnections(() => [writer]);

    sweep.sweep(); // first look: its use count noted
    await store.messages.append(session.id, { role: "user", content: "used within the tick" });
    sweep.sweep(); // used since the last look: stays awake
    expect(writer.resting).toBe(false);
    expect(cacheSize(writer)).toBe(defaultCacheSize(store.path));

    sweep.sweep(); // nothing since: rests
    expect(writer.resting).toBe(true);
    expect(cacheSize(writer)).toBe(2);

    await store.messages.append(session.id, { role: "assistant", content: "and wakes" });
    expect(writer.resting).toBe(false);
    expect(cacheSize(writer)).toBe(defaultCacheSize(store.path));
    expect((await store.messages.load(session.id)).map((m) => m.content)).toEqual([
      "used within the tick",
      "and wakes",
    ]);
  });

  it("every store this process opens is swept: its quiet writer rests at the process's tick", async () => {
    const { store, writer } = await opened();
    await store.sessions.create({ title: "swept" });
    expect(writer.resting).toBe(false);
    sweepQuiet();
    sweepQuiet();
    expect(writer.resting).toBe(true);
    expect(cacheSize(writer)).toBe(2);
  });

  it("a probe (the handoff watcher's poll) reads at rest, and the sweep does not count it as use", async () => {
    const { store, writer } = await opened();
    const session = await store.sessions.create({ title: "probed" });
    await store.handoffs.request(session.id, "slack");
    const sweep = new QuietConnections(() => [writer]);
    sweep.sweep(); // noted
    // Probes only: the writer still rests at the next look, and they keep it at rest.
    expect((await store.handoffs.list("pending")).map((s) => s.id)).toEqual([session.id]);
    sweep.sweep();
    expect(writer.resting).toBe(true);
    expect((await store.handoffs.list("pending")).map((s) => s.id)).toEqual([session.id]);
    expect(await store.handoffs.list("running")).toEqual([]);
    expect(writer.resting).toBe(true);
    expect(cacheSize(writer)).toBe(2);
    // A call that is not a probe wakes it.
    await store.messages.append(session.id, { role: "user", content: "real work" });
    expect(writer.resting).toBe(false);
  });

  it("never rests while one of its statements is being iterated", async () => {
    const { store, writer } = await opened();
    const session = await store.sessions.create({ title: "iterated" });
    await store.messages.append(session.id, { role: "user", content: "one" });
    await store.messages.append(session.id, { role: "user", content: "two" });
    const rows = writer.stmt("SELECT content FROM messages ORDER BY id").iterate();
    expect((rows.next().value as { content: string }).content).toBe("one");
    writer.rest();
    expect(writer.resting).toBe(false);
    expect((rows.next().value as { content: string }).content).toBe("two");
    rows.return?.();
    writer.rest();
    expect(writer.resting).toBe(true);
  });

  it("never rests inside a transaction", async () => {
    const { store, writer } = await opened();
    await store.sessions.create({ title: "awake" });
    const during = writer.transaction(() => {
      writer.rest();
      return writer.resting;
    });
    expect(during).toBe(false);
    expect(cacheSize(writer)).toBe(defaultCacheSize(store.path));
  });
});
