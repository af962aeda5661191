import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { SqliteStore as Store } from "../../../src/index.js";
import { internals } from "../../../src/store/sqlite/store.js";
import { spawnNode } from "../../helpers/process.js";
import { drain, expectHearthError, TestHomes } from "./fixture.js";

/** C1: pure readers use read-only connections and never touch the writer. */

const homes = new TestHomes();

afterEach(async () => {
  await homes.cleanup();
});

async function seeded(): Promise<{ home: string; writer: Store; sessionId: string }> {
  const home = homes.makeHome();
  const writer = await homes.open(home);
  const session = await writer.sessions.create({ title: "Seeded" });
  await writer.messages.appendBatch(session.id, [
    { role: "user", content: "kettle question" },
    { role: "assistant", content: "kettle answer" },
  ]);
  await writer.meta.set("seed", "yes");
  return { home, writer, sessionId: session.id };
}

describe("a reader store", () => {
  it("sees what the writer committed, including later commits", async () => {
    const { home, writer, sessionId } = await seeded();
    const reader = await homes.open(home, { role: "reader" });
    expect(reader.role).toBe("reader");
    expect(await reader.sessions.require(sessionId)).toEqual(
      await writer.sessions.require(sessionId),
    );
    expect((await reader.messages.load(sessionId)).map((m) => m.content)).toEqual([
      "kettle question",
      "kettle answer",
    ]);
    expect(await reader.search("kettle")).toHaveLength(2);
    expect(await reader.meta.get("seed")).toBe("yes");

    await writer.messages.append(sessionId, { role: "user", content: "teapot follow-up" });
    await writer.sessions.rename(sessionId, "Renamed");
    expect((await reader.messages.load(sessionId)).at(-1)!.content).toBe("teapot follow-up");
    expect((await reader.sessions.require(sessionId)).title).toBe("Renamed");
    expect(await reader.counts()).toEqual(await writer.counts());
  });

  it("opened alone (no writer in the process) reads the store and has no writer connection", async () => {
    const { home, writer, sessionId } = await seeded();
    await writer.close();
    const reader = await homes.open(home, { role: "reader" });
    expect(reader[internals].uses("writer")).toBe(0);
    expect(() => reader[internals].connection("writer")).toThrow(/no writer connection/);
    const before = reader[internals].uses("reader");
    expect(await reader.messages.load(sessionId)).toHaveLength(2);
    expect((await reader.sessions.list()).items).toHaveLength(1);
    expect(reader[internals].uses("reader")).toBeGreaterThan(before);
    expect((await reader.quickCheck()).ok).toBe(true);
    expect(await reader.schema()).toMatchObject({ version: expect.any(Number) });
  });

  it("refuses every write method with HEARTH_READ_ONLY and changes nothing", async () => {
    const { home, writer, sessionId } = await seeded();
    const reader = await homes.open(home, { role: "reader" });
    const loaded = await reader.messages.load(sessionId);
    const countsBefore = await writer.counts();
    const sessionBefore = await writer.sessions.require(sessionId);
    const writerUses = writer[internals].uses("writer");

    const writes: [string, () => Promise<unknown>][] = [
      ["sessions.create", () => reader.sessions.create({ title: "nope" })],
      ["sessions.rename", () => reader.sessions.rename(sessionId, "nope")],
      ["sessions.setPinned", () => reader.sessions.setPinned(sessionId, true)],
      ["sessions.setArchived", () => reader.sessions.setArchived(sessionId, true)],
      ["sessions.setHidden", () => reader.sessions.setHidden(sessionId, true)],
      ["sessions.end", () => reader.sessions.end(sessionId, "user")],
      ["sessions.resume", () => reader.sessions.resume(sessionId)],
      ["sessions.delete", () => reader.sessions.delete(sessionId)],
      ["sessions.deleteEmpty", () => reader.sessions.deleteEmpty()],
      ["messages.append", () => reader.messages.append(sessionId, { role: "user", content: "x" })],
      [
        "messages.appendBatch",
        () => reader.messages.appendBatch(sessionId, [{ role: "user", content: "x" }]),
      ],
      [
        "messages.save",
        () => reader.messages.save(sessionId, [...loaded, { role: "user", content: "x" }]),
      ],
      ["messages.rewind", () => reader.messages.rewind(sessionId, 0)],
      ["messages.compact", () => reader.messages.compact(sessionId, { content: "s" })],
      ["meta.set", () => reader.meta.set("seed", "no")],
      ["meta.delete", () => reader.meta.delete("seed")],
    ];
    for (const [name, call] of writes) {
      const err = await expectHearthError(call(), "HEARTH_READ_ONLY").catch((e: unknown) => {
        throw new Error(`${name}: ${String(e)}`);
      });
      expect(err.resource).toBe(reader.path);
    }

    expect(await writer.counts()).toEqual(countsBefore);
    expect(await writer.sessions.require(sessionId)).toEqual(sessionBefore);
    expect(await writer.meta.entries()).toEqual({ seed: "yes" });
    // The refusals never reached the writer connection.
    expect(writer[internals].uses("writer")).toBe(writerUses);
    // A dry-run sweep is a read and is allowed.
    expect(await reader.sessions.deleteEmpty({ dryRun: true })).toEqual([]);
  });

  it("on a home without a store is HEARTH_STORE_NOT_FOUND and creates no file or directory", async () => {
    const home = homes.makeHome();
    await expectHearthError(openReader(home), "HEARTH_STORE_NOT_FOUND");
    expect(fs.readdirSync(home)).toEqual([]);

    await expectHearthError(openReader(home, "work"), "HEARTH_STORE_NOT_FOUND");
    expect(fs.readdirSync(home)).toEqual([]);

    const missing = path.join(home, "not", "yet");
    await expectHearthError(openReader(missing), "HEARTH_STORE_NOT_FOUND");
    expect(fs.existsSync(path.join(home, "not"))).toBe(false);
    expect(fs.readdirSync(home)).toEqual([]);
  });

  it("keeps reading while another process holds the write lock, and sees only committed rows", async () => {
    const { home, writer, sessionId } = await seeded();
    const reader = await homes.open(home, { role: "reader" });
    const holder = await holdWriteLock(writer.path);
    try {
      // The other process holds an open IMMEDIATE transaction with an uncommitted meta row.
      const started = Date.now();
      expect(await reader.meta.get("uncommitted")).toBeNull();
      expect(await reader.messages.load(sessionId)).toHaveLength(2);
      expect(await reader.search("kettle")).toHaveLength(2);
      // The writer store's reads go through its read-only connection too: no waiting.
      expect(await writer.meta.get("uncommitted")).toBeNull();
      expect((await writer.sessions.list()).items).toHaveLength(1);
      // None waited for the write lock: that wait lasts until the holder lets go
      // (not before release() below) or the patience (busyTimeoutMs, 5000 ms) ends.
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await holder.release();
    }
  });
});

describe("C1: read methods of a writer store run on the read-only connection", () => {
  it("every read-only method leaves the writer's statement count unchanged", async () => {
    const { writer, sessionId } = await seeded();
    const reads: [string, () => Promise<unknown>][] = [
      ["sessions.get", () => writer.sessions.get(sessionId)],
      ["sessions.require", () => writer.sessions.require(sessionId)],
      ["sessions.list", () => writer.sessions.list({ limit: 10 })],
      ["sessions.deleteEmpty(dryRun)", () => writer.sessions.deleteEmpty({ dryRun: true })],
      ["messages.load", () => writer.messages.load(sessionId)],
      ["messages.load(history)", () => writer.messages.load(sessionId, { includeHistory: true })],
      ["counts", () => writer.counts()],
      ["messages.counts", () => writer.messages.counts()],
      ["search", () => writer.search("kettle")],
      ["export jsonl", () => drain(writer.export({ format: "jsonl" }))],
      [
        "export markdown",
        () => drain(writer.export({ format: "markdown", sessionIds: [sessionId] })),
      ],
      ["meta.get", () => writer.meta.get("seed")],
      ["meta.entries", () => writer.meta.entries()],
      ["durability", () => writer.durability()],
      ["schema", () => writer.schema()],
      ["quickCheck", () => writer.quickCheck()],
    ];
    // Statement-based reads must also show up on the reader's count.
    const pragmaOnly = new Set(["durability", "schema", "quickCheck"]);

    const readerStart = writer[internals].uses("reader");
    for (const [name, call] of reads) {
      const writerBefore = writer[internals].uses("writer");
      const readerBefore = writer[internals].uses("reader");
      await call();
      expect(writer[internals].uses("writer"), `${name} used the writer connection`).toBe(
        writerBefore,
      );
      if (!pragmaOnly.has(name)) {
        expect(
          writer[internals].uses("reader"),
          `${name} did not use the reader connection`,
        ).toBeGreaterThan(readerBefore);
      }
    }
    expect(writer[internals].uses("reader")).toBeGreaterThan(readerStart);
    // Sanity: the counter does move for writes.
    const before = writer[internals].uses("writer");
    await writer.meta.set("k", "v");
    expect(writer[internals].uses("writer")).toBeGreaterThan(before);
  });

  it("reads never see the writer connection's uncommitted transaction", async () => {
    // Behavioural proof for every read method, including the PRAGMA-based ones
    // the statement counter cannot see: while the writer connection sits in an
    // open transaction with uncommitted changes, a read served by the writer
    // would see them; one served by the read-only connection cannot.
    const { writer, sessionId } = await seeded();
    const w = writer[internals].connection("writer").db;
    w.exec("BEGIN IMMEDIATE");
    try {
      w.prepare(
        `INSERT INTO sessions (id, profile, source, title, created_at, updated_at, last_activity_at)
         VALUES ('ghost', 'default', 'cli', 'Ghost', 9e12, 9e12, 9e12)`,
      ).run();
      w.prepare(
        "INSERT INTO messages (session_id, ordinal, role, content, created_at) VALUES ('ghost', 0, 'user', 'kettle ghost', 0)",
      ).run();
      w.prepare("INSERT INTO meta (key, value, updated_at) VALUES ('ghost', 'boo', 0)").run();
      w.pragma("user_version = 99");
      // A row that breaks a CHECK constraint: quick_check on the writer would report it.
      w.pragma("ignore_check_constraints = ON");
      w.prepare(
        "INSERT INTO messages (session_id, ordinal, role, content, created_at) VALUES ('ghost', 1, 'robot', 'x', 0)",
      ).run();
      w.pragma("ignore_check_constraints = OFF");
      expect(w.pragma("quick_check")).not.toEqual([{ quick_check: "ok" }]);

      expect(await writer.sessions.get("ghost")).toBeNull();
      await expectHearthError(writer.sessions.require("ghost"), "HEARTH_SESSION_NOT_FOUND");
      expect((await writer.sessions.list()).items.map((s) => s.id)).toEqual([sessionId]);
      await expectHearthError(writer.messages.load("ghost"), "HEARTH_SESSION_NOT_FOUND");
      expect(await writer.counts()).toMatchObject({ sessions: 1, messages: 2 });
      expect(await writer.search("ghost")).toEqual([]);
      expect(await writer.search("kettle")).toHaveLength(2);
      const exported = (await drain(writer.export({ format: "jsonl" }))).join("");
      expect(exported).not.toContain("ghost");
      expect(await writer.meta.get("ghost")).toBeNull();
      expect(await writer.meta.entries()).toEqual({ seed: "yes" });
      expect((await writer.schema()).version).not.toBe(99);
      expect(await writer.quickCheck()).toEqual({ ok: true, problems: [] });
      expect(await writer.sessions.deleteEmpty({ dryRun: true })).toEqual([]);
    } finally {
      w.pragma("ignore_check_constraints = OFF");
      if (w.inTransaction) w.exec("ROLLBACK");
    }
    expect(await writer.sessions.get("ghost")).toBeNull();
    expect((await writer.quickCheck()).ok).toBe(true);
  });
});

function openReader(home: string, profile?: string): Promise<Store> {
  // homes.open() tracks only stores that opened, so a refusal leaves nothing to close.
  return homes.open(home, { role: "reader", ...(profile ? { profile } : {}) });
}

/**
 * Start another process that opens the database with better-sqlite3, begins
 * an IMMEDIATE transaction, writes an uncommitted meta row and waits.
 */
async function holdWriteLock(dbPath: string): Promise<{ release: () => Promise<void> }> {
  const script = `
    const Database = require("better-sqlite3");
    const db = new Database(process.argv[1], { fileMustExist: true });
    db.exec("BEGIN IMMEDIATE");
    db.prepare("INSERT INTO meta (key, value, updated_at) VALUES ('uncommitted', 'x', 0)").run();
    process.stdout.write("locked\\n");
    process.stdin.on("data", () => { db.exec("ROLLBACK"); db.close(); process.exit(0); });
  `;
  const child = spawnNode(["-e", script, dbPath], {
    cwd: path.resolve(import.meta.dirname, "../../.."),
  });
  await child.line((l) => l === "locked", "locked");
  return {
    release: async () => {
      child.send("go");
      await child.exited;
    },
  };
}
