/**
 * A reader thread: one read-only SQLite connection on the store, running the
 * large reads (search, big transcript loads, export pages) that would
 * otherwise hold the caller's event loop. Same code as on the main thread
 * (the store's own query modules), on a connection of its own.
 *
 * Its connection opens on the inode the main thread holds (`key`) and is
 * reopened when the main thread moves to another inode (after a restore);
 * a file that is not that inode is refused (F3).
 */
import { statSync } from "node:fs";
import { setPriority } from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import type { HearthConfig } from "../../../config/schema.js";
import { HearthError } from "../../../errors.js";
import { inodeKey } from "../../../files/inspect.js";
import { fromSqliteError, isSqliteError } from "../../../sqlite-errors.js";
import { exportStep } from "../../export.js";
import { JSON_PART_CHARS, jsonTextParts } from "../../transcript-json.js";
import type { Access } from "../access.js";
import { Connection } from "../connection.js";
import { SqliteExport } from "../export.js";
import { readWindowJson, SqliteMessages } from "../messages.js";
import { searchHits } from "../search.js";
import {
  type FromThread,
  PART,
  type ReaderOp,
  type StreamOp,
  type ToThread,
  toWire,
} from "./wire.js";

interface ThreadInit {
  path: string;
  profile: string;
  config: HearthConfig;
}

const init = workerData as ThreadInit;

// Linux renices only the calling thread: a large read yields the CPU to the
// event loop that serves turns (the process's own thread) whenever both want it.
try {
  if (init.config.store.readerNice > 0) setPriority(init.config.store.readerNice);
} catch {
  // Not permitted here (some containers): the read still runs, at the process's priority.
}
let conn: Connection | undefined;
let openedKey = "";

function connection(key: string): Connection {
  if (conn && openedKey === key) return conn;
  conn?.close();
  conn = undefined;
  const opened = new Connection(init.path, "reader", init.config);
  const stats = statSync(init.path, { throwIfNoEntry: false });
  if (!stats || inodeKey(stats) !== key) {
    opened.close();
    throw new HearthError(
      "HEARTH_GENERATION_CHANGED",
      `${init.path} is no longer the database this process holds`,
      { resource: init.path, hint: "retry: the process reattaches to the current database" },
    );
  }
  conn = opened;
  openedKey = key;
  return conn;
}

function access(key: string): Access {
  const readOnly = (): never => {
    throw new HearthError("HEARTH_READ_ONLY", "a reader thread never writes", {
      resource: init.path,
    });
  };
  return {
    profile: init.profile,
    path: init.path,
    read: () => connection(key),
    probe: () => connection(key),
    write: readOnly,
    writeTransaction: async () => readOnly(),
    now: () => Date.now(),
  };
}

const ops: Record<ReaderOp, (a: Access, args: unknown[]) => Promise<unknown> | unknown> = {
  search: (a, [query]) => searchHits(a, query as never),
  "messages.load": (a, [id, window]) => new SqliteMessages(a).load(id as string, window as never),
  "messages.loadJson": (a, [id, window]) =>
    new SqliteMessages(a).loadJson(id as string, window as never),
  "export.step": (a, [options, cursor]) =>
    exportStep(new SqliteExport(a), options as never, cursor as never),
};

const streamOps: Record<StreamOp, (a: Access, args: unknown[]) => Generator<string, void>> = {
  "messages.loadJsonParts": (a, [id, window]) =>
    jsonTextParts(id as string, readWindowJson(a, id as string, window as never), JSON_PART_CHARS),
};

/** Open byte streams (their rows read, their parts built on `pull`), by job id. */
const streams = new Map<number, Generator<string, void>>();

/** Part buffers the caller handed back, to encode later parts into (a few at most). */
const spare: ArrayBuffer[] = [];
const SPARE_MAX = 4;
const encoder = new TextEncoder();

/** `text` as UTF-8 in a spare buffer when it fits one, else in a new one. */
function encode(text: string): Uint8Array {
  const buffer = spare.pop();
  if (buffer) {
    const { read, written } = encoder.encodeInto(text, new Uint8Array(buffer));
    if (read === text.length) return new Uint8Array(buffer, 0, written);
    spare.push(buffer);
  }
  // Room for the next parts too: JSON text is mostly ASCII, 1 byte a character.
  const fresh = new Uint8Array(
    new ArrayBuffer(Math.ceil(Math.max(text.length, JSON_PART_CHARS) * 1.25)),
  );
  const { read, written } = encoder.encodeInto(text, fresh);
  return read === text.length ? fresh.subarray(0, written) : encoder.encode(text);
}

function pull(id: number): void {
  const stream = streams.get(id);
  if (!stream) return; // cancelled meanwhile
  try {
    const next = stream.next();
    if (next.done) {
      streams.delete(id);
      port!.postMessage({ type: "chunk", id } satisfies FromThread);
      return;
    }
    const bytes = encode(next.value);
    // Each part moves to the caller's thread without a copy (and may come back: "give").
    port!.postMessage({ type: "chunk", id, bytes } satisfies FromThread, [
      bytes.buffer as ArrayBuffer,
    ]);
  } catch (err) {
    streams.delete(id);
    port!.postMessage({ type: "failed", id, error: toWire(err) } satisfies FromThread);
  }
}

/** Long results being sent a part at a time, by job id. */
const pending = new Map<number, { items: unknown[]; at: number }>();

function sendPart(id: number): void {
  const result = pending.get(id);
  if (!result) return;
  const { items, at } = result;
  if (at + PART < items.length) {
    result.at += PART;
    port!.postMessage({ type: "part", id, items: items.slice(at, at + PART) } satisfies FromThread);
    return;
  }
  pending.delete(id);
  port!.postMessage({ type: "done", id, value: items.slice(at), parts: true } satisfies FromThread);
}

const port = parentPort;
if (!port) throw new Error("reader-pool/thread.js runs as a worker thread");
port.on("message", async (message: ToThread) => {
  if (message.type === "next") {
    sendPart(message.id);
    return;
  }
  if (message.type === "pull") {
    pull(message.id);
    return;
  }
  if (message.type === "give") {
    if (spare.length < SPARE_MAX) spare.push(message.buffer);
    return;
  }
  if (message.type === "cancel") {
    streams.delete(message.id);
    return;
  }
  if (message.type === "close") {
    pending.clear();
    streams.clear();
    spare.length = 0;
    conn?.close();
    conn = undefined;
    port.postMessage({ type: "closed" } satisfies FromThread);
    return;
  }
  const { id, key, op, args } = message;
  try {
    if (op in streamOps) {
      streams.set(id, streamOps[op as StreamOp](access(key), args));
      port.postMessage({ type: "stream", id } satisfies FromThread);
      return;
    }
    const value = await ops[op as ReaderOp](access(key), args);
    if (value instanceof Uint8Array) {
      // Bytes move to the caller's thread without a copy.
      port.postMessage({ type: "done", id, value } satisfies FromThread, [
        value.buffer as ArrayBuffer,
      ]);
      return;
    }
    if (!Array.isArray(value) || value.length <= PART) {
      port.postMessage({ type: "done", id, value } satisfies FromThread);
      return;
    }
    pending.set(id, { items: value, at: 0 });
    sendPart(id);
  } catch (err) {
    // SQLite's errors get the codes they get on the caller's thread
    // (HEARTH_SQLITE with SQLite's code, HEARTH_BUSY, HEARTH_NO_SPACE), not HEARTH_INTERNAL.
    const coded = isSqliteError(err) ? fromSqliteError(err, init.path) : err;
    port.postMessage({ type: "failed", id, error: toWire(coded) } satisfies FromThread);
  }
});
