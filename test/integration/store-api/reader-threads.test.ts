import { closeSync, openSync, readdirSync, readFileSync, readlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { SqliteStore as Store } from "../../../src/index.js";
import { internals } from "../../../src/store/sqlite/store.js";
import { openSqliteStore, tempHome } from "../../helpers/home.js";
import { run, until } from "../../helpers/process.js";

const open: Store[] = [];
afterEach(async () => {
  const paths = open.map((s) => s.path);
  for (const s of open.splice(0)) await s.close();
  // close() waits for the reader threads' connections (the test "close()
  // resolves only after ..." below). Were one to outlive it, its -shm would
  // stay mapped here, and once the temporary home is removed a later test's
  // database could reuse the inode and be refused (removed-index.ts; a
  // clean-clone run failed so before close() waited).
  await until("the closed stores' -shm unmapped", async () => {
    const maps = readFileSync("/proc/self/maps", "utf8");
    return paths.every((path) => !maps.includes(`${path}-shm`));
  });
});

async function filled(home: string, messages: number): Promise<string> {
  const writer = await openSqliteStore({ home });
  const s = await writer.sessions.create({ title: "long" });
  for (let i = 0; i < messages; i += 1000) {
    await writer.messages.appendBatch(
      s.id,
      Array.from({ length: Math.min(1000, messages - i) }, (_, j) => ({
        role: j % 2 ? ("assistant" as const) : ("user" as const),
        content: `message ${i + j} about ${j % 7 === 0 ? "lighthouses" : "harbours"}`,
      })),
    );
  }
  await writer.close();
  return s.id;
}

/** Descriptors of this process open on the database or its sidecars. */
function descriptorsOn(path: string): string[] {
  const fds = readdirSync("/proc/self/fd");
  const out: string[] = [];
  for (const fd of fds) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target === path || target === `${path}-wal` || target === `${path}-shm`) out.push(target);
    } catch {
      // closed meanwhile
    }
  }
  return out;
}

describe("reader threads: large reads off the caller's event loop", () => {
  it("search, whole loads and export return what the caller's thread returns, without using its connection", async () => {
    const home = tempHome();
    const id = await filled(home, 3000);
    const plain = await openSqliteStore({ home, role: "reader" });
    open.push(plain);
    const threaded = await openSqliteStore({ home, readerThreads: 2 });
    open.push(threaded);
    const before = threaded[internals].uses("reader");
    const load = await threaded.messages.load(id);
    const json = await threaded.messages.loadJson(id);
    const hits = await threaded.search("lighthouses", { limit: 50 });
    let exported = "";
    for await (const chunk of threaded.export({ format: "jsonl" })) exported += chunk;
    // Both stores share this process's reader connection (C1): the threaded calls never touched it.
    expect(threaded[internals].uses("reader")).toBe(before);

    expect(load).toEqual(await plain.messages.load(id));
    expect(JSON.parse(new TextDecoder().decode(json))).toEqual(load);
    expect(hits).toEqual(await plain.search("lighthouses", { limit: 50 }));
    let expectedExport = "";
    for await (const chunk of plain.export({ format: "jsonl" })) expectedExport += chunk;
    expect(exported).toBe(expectedExport);
    expect(exported.split("\n").filter(Boolean)).toHaveLength(3001);
    const after = threaded[internals].uses("reader");
    // A small window stays on the caller's thread (a round trip costs more than 20 rows).
    await threaded.messages.load(id, { limit: 20 });
    expect(threaded[internals].uses("reader")).toBeGreaterThan(after);
  });

  it("close() resolves only after the threads' connections ended: nothing of the store stays open or mapped", async () => {
    const home = tempHome();
    const id = await filled(home, 2000);
    const threaded = await openSqliteStore({ home, readerThreads: 2 });
    const path = threaded.path;
    const before = threaded[internals].uses("reader");
    await Promise.all([threaded.messages.load(id), threaded.search("harbours", { limit: 50 })]);
    // Both went to the threads, not this thread's connection.
    expect(threaded[internals].uses("reader")).toBe(before);
    await threaded.close();
    // Read at once: a thread's connection that outlived close() keeps the -shm
    // mapped and the files open here (a clean-clone run was refused a new
    // store on a reused inode for that).
    const maps = readFileSync("/proc/self/maps", "utf8");
    expect(maps.includes(`${path}-shm`)).toBe(false);
    expect(descriptorsOn(path)).toEqual([]);
  });

  it("keeps the event loop turning while a 50,000-message transcript loads", async () => {
    const home = tempHome();
    const id = await filled(home, 50_000);
    const threaded = await openSqliteStore({ home, role: "reader", readerThreads: 1 });
    open.push(threaded);
    await threaded.search("warm"); // the thread is started and has its connection
    let turns = 0;
    let loading = true;
    const tick = (): void => {
      turns++;
      if (loading) setImmediate(tick);
    };
    setImmediate(tick);
    const messages = await threaded.messages.load(id);
    loading = false;
    expect(messages).toHaveLength(50_000);
    // On the caller's thread the load is one synchronous read: the loop could not turn at all.
    expect(turns).toBeGreaterThan(1);
  });

  it("a transcript's JSON in parts: loadJson's bytes, built on the thread as asked for, the thread free between parts", async () => {
    const home = tempHome();
    const id = await filled(home, 10_000);
    const plain = await openSqliteStore({ home, role: "reader" });
    open.push(plain);
    const threaded = await openSqliteStore({ home, readerThreads: 1 });
    open.push(threaded);
    const whole = await plain.messages.loadJson(id);
    const collect = async (parts: AsyncIterableIterator<Uint8Array>) => {
      const got: Uint8Array[] = [];
      for await (const part of parts) got.push(part);
      return got;
    };
    const onLoop = await collect(await plain.messages.loadJsonParts(id));
    expect(onLoop.length).toBeGreaterThan(1);
    expect(Buffer.concat(onLoop).equals(Buffer.from(whole))).toBe(true);

    const before = threaded[internals].uses("reader");
    const parts = await threaded.messages.loadJsonParts(id);
    const first = await parts.next();
    // The one thread holds the stream's rows, yet runs another job between two parts.
    expect((await threaded.search("lighthouses", { limit: 5 })).length).toBe(5);
    // Rows read before the stream opened are what it sends (one snapshot).
    const writer = await openSqliteStore({ home });
    open.push(writer);
    await writer.messages.append(id, { role: "user", content: "written after the stream opened" });
    const rest = await collect(parts);
    expect(rest.length).toBeGreaterThan(0);
    expect(threaded[internals].uses("reader")).toBe(before);
    const threadedBytes = Buffer.concat([first.value as Uint8Array, ...rest]);
    expect(threadedBytes.equals(Buffer.from(whole))).toBe(true);
    expect(JSON.parse(threadedBytes.toString("utf8"))).toEqual(
      await plain.messages.load(id, { limit: 10_000 }),
    );

    // Parts handed back once read: the thread encodes later parts into their memory.
    const copies: Buffer[] = [];
    const reused = await threaded.messages.loadJsonParts(id);
    for await (const part of reused) {
      copies.push(Buffer.from(part)); // a copy: the part itself is about to go back
      reused.release(part);
      expect(part.buffer.byteLength).toBe(0); // transferred back to the thread
    }
    expect(copies.length).toBeGreaterThan(2);
    // (10,001 messages now: the one appended above is in this read.)
    expect(Buffer.concat(copies).equals(Buffer.from(await plain.messages.loadJson(id)))).toBe(true);
  });

  it("without reader threads, a transcript's JSON parts are built one task at a time", async () => {
    const home = tempHome();
    const id = await filled(home, 10_000);
    const plain = await openSqliteStore({ home, role: "reader" });
    open.push(plain);
    const parts = await plain.messages.loadJsonParts(id);
    let turns = 0;
    let reading = true;
    const tick = (): void => {
      turns++;
      if (reading) setImmediate(tick);
    };
    setImmediate(tick);
    let count = 0;
    // Read as a consumer that never waits (a socket taking every write at once).
    for await (const _ of parts) count++;
    reading = false;
    expect(count).toBeGreaterThan(5);
    // The loop turned between parts: other requests are served while a long transcript is sent.
    expect(turns).toBeGreaterThanOrEqual(count - 1);
  });

  it("a transcript stream ends early on return(); a stopped thread fails its streams", async () => {
    const home = tempHome();
    const id = await filled(home, 3000);
    const threaded = await openSqliteStore({ home, readerThreads: 1 });
    open.push(threaded);
    await expect(threaded.messages.loadJsonParts("no-such-session")).rejects.toMatchObject({
      code: "HEARTH_SESSION_NOT_FOUND",
    });
    const abandoned = await threaded.messages.loadJsonParts(id);
    await abandoned.next();
    await abandoned.return?.();
    expect(await abandoned.next()).toEqual({ done: true, value: undefined });
    const cut = await threaded.messages.loadJsonParts(id);
    await cut.next();
    await threaded.park();
    await expect(cut.next()).rejects.toMatchObject({ code: "HEARTH_STORE_CLOSED" });
    await threaded.resume();
    const again = await threaded.messages.loadJsonParts(id);
    let bytes = 0;
    for await (const part of again) bytes += part.byteLength;
    expect(bytes).toBe((await threaded.messages.loadJson(id)).byteLength);
  });

  it("a reader thread runs at store.readerNice, the caller's thread at its own priority", async () => {
    const home = tempHome();
    await filled(home, 10);
    /** The nice value of each thread of this process (field 19 of /proc/self/task/<tid>/stat). */
    const nices = (): number[] =>
      readdirSync("/proc/self/task").flatMap((tid) => {
        try {
          const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
          return [Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16])];
        } catch {
          return []; // ended meanwhile
        }
      });
    expect(nices()).not.toContain(7);
    const threaded = await openSqliteStore({
      home,
      readerThreads: 1,
      config: { store: { readerNice: 7 } },
    });
    open.push(threaded);
    await threaded.search("harbours"); // the thread starts, and renices itself first
    expect(nices()).toContain(7);
    expect(readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ")[16]).toBe("0");
  });

  it("errors cross the thread with their code and kind", async () => {
    const home = tempHome();
    await filled(home, 10);
    const threaded = await openSqliteStore({ home, readerThreads: 1 });
    open.push(threaded);
    await expect(threaded.messages.load("no-such-session")).rejects.toMatchObject({
      code: "HEARTH_SESSION_NOT_FOUND",
    });
    await expect(threaded.search("x", { limit: 9999 })).rejects.toBeInstanceOf(RangeError);
    await expect(
      (async () => {
        for await (const _ of threaded.export({ format: "pdf" as never })) void _;
      })(),
    ).rejects.toBeInstanceOf(RangeError);
  });

  it("a maintenance window closes the threads' connections too, and reads resume after it", async () => {
    const home = tempHome();
    await filled(home, 100);
    const threaded = await openSqliteStore({ home, readerThreads: 2 });
    open.push(threaded);
    // Two at once: both threads start, each with its own connection.
    await Promise.all([threaded.search("lighthouses"), threaded.search("harbours")]);
    const path = threaded.path;
    await threaded.park();
    // Parked: no connection is left (an open WAL connection always holds -wal and -shm; the
    // descriptors left on the database itself are the process's lock descriptors, "parked").
    expect(descriptorsOn(path).filter((target) => target !== path)).toEqual([]);
    await threaded.resume();
    expect((await threaded.search("lighthouses")).length).toBeGreaterThan(0);
  });

  it("idle threads never keep a process alive, busy ones do until their answer arrives", async () => {
    const home = tempHome();
    const id = await filled(home, 2000);
    const script = `
      const { openStore } = await import(${JSON.stringify(join(process.cwd(), "dist/index.js"))});
      const store = await openStore({ home: ${JSON.stringify(home)}, readerThreads: 2 });
      await store.search("harbours", { limit: 5 });
      // The threads are idle (unreferenced) now; the next search must hold the process open.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const hits = await store.search("lighthouses", { limit: 5 });
      // A transcript stream: its thread is held while a part is awaited, not after the last.
      const parts = await store.messages.loadJsonParts(${JSON.stringify(id)});
      await new Promise((resolve) => setTimeout(resolve, 50));
      let bytes = 0;
      for await (const part of parts) bytes += part.byteLength;
      console.log(JSON.stringify({ hits: hits.length, json: bytes > 0 }));
      // No close(): the process must still exit by itself.
    `;
    const result = await run(process.execPath, ["--input-type=module", "-e", script]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.json()).toEqual({ hits: 5, json: true });
  });
});

// Found while looking for the cause of the dashboard's 500 HEARTH_INTERNAL
// answers in a 30-minute torture run: an error SQLite raised inside a reader
// thread crossed back uncoded.
it("an error SQLite raises in a reader thread gets the code it gets on the caller's thread", async () => {
  const home = tempHome();
  const id = await filled(home, 3000);
  const path = join(home, "state.db");
  // Every row in the database file (not left in the WAL), then garbage over
  // one leaf page of the messages table.
  const raw = new Database(path);
  raw.pragma("wal_checkpoint(TRUNCATE)");
  const pageSize = raw.pragma("page_size", { simple: true }) as number;
  const leaf = raw
    .prepare(
      "SELECT pageno FROM dbstat WHERE name = 'messages' AND pagetype = 'leaf' ORDER BY pageno LIMIT 1 OFFSET 3",
    )
    .pluck()
    .get() as number;
  raw.close();
  const fd = openSync(path, "r+");
  writeSync(fd, Buffer.alloc(pageSize, 0x5a), 0, pageSize, (leaf - 1) * pageSize);
  closeSync(fd);
  const failure = async (readerThreads: boolean) => {
    const store = await openSqliteStore({ home, readerThreads });
    open.push(store);
    return store.messages.load(id).then(
      () => undefined,
      (err: unknown) => err as { code?: string; sqliteCode?: string },
    );
  };
  const onLoop = await failure(false);
  const onThread = await failure(true);
  expect(onLoop).toMatchObject({ code: "HEARTH_SQLITE", sqliteCode: "SQLITE_CORRUPT" });
  expect(onThread).toMatchObject({ code: "HEARTH_SQLITE", sqliteCode: "SQLITE_CORRUPT" });
});
