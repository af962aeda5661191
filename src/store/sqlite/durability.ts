import Database from "better-sqlite3";
import type { HearthConfig } from "../../config/schema.js";
import { HearthError } from "../../errors.js";
import { inspectFilesystem } from "../../files/fs-type.js";
import type { InodeLocks } from "../../process/inode-locks.js";
import { claimStructural } from "../../process/structural.js";
import type { DurabilityReport } from "../types.js";
import { type Connection, synchronousName } from "./connection.js";
import type { MergeDebt } from "./fts-merge.js";
import { hasWalResetBug } from "./sqlite-version.js";
import type { WalSync } from "./wal-sync/sync.js";

let cachedVersion: string | undefined;

/** The version of the SQLite library better-sqlite3 linked into this process. */
export function sqliteVersion(): string {
  if (cachedVersion === undefined) {
    const db = new Database(":memory:");
    cachedVersion = (db.prepare("SELECT sqlite_version() AS v").get() as { v: string }).v;
    db.close();
  }
  return cachedVersion;
}

/** Refuse WAL where it cannot be shared safely (C2). */
export function assertWalAllowed(path: string, reason: "configured" | "file"): void {
  const version = sqliteVersion();
  const why = reason === "file" ? "the database is in WAL mode" : "WAL is configured";
  if (hasWalResetBug(version)) {
    throw new HearthError(
      "HEARTH_WAL_UNSAFE_SQLITE",
      `refusing ${path}: ${why} but SQLite ${version} has the WAL-reset bug (3.7.0–3.51.2)`,
      { resource: path, hint: "upgrade better-sqlite3 (it bundles SQLite >= 3.51.3)" },
    );
  }
  const fs = inspectFilesystem(path);
  if (fs.walUnsafeReason) {
    throw new HearthError(
      "HEARTH_WAL_UNSAFE_FS",
      `refusing ${path}: ${why} but ${fs.walUnsafeReason}, which cannot share WAL memory between processes safely`,
      {
        resource: path,
        hint:
          reason === "file"
            ? 'move the store to a local disk, or (with every hearth process stopped) set durability.journalMode to "delete"'
            : 'set "durability": { "journalMode": "delete" } in config.json, or move HEARTH_HOME to a local disk',
        details: { fstype: fs.fstype, magic: fs.magic },
      },
    );
  }
}

/**
 * Bring a new writer connection to the configured journal mode. Journal mode
 * is a property of the file: it is changed only when no other process holds
 * the database (fail closed: when holders cannot be told, it is left as is).
 * Returns a warning when the configuration could not be applied.
 */
export function applyJournalMode(
  conn: Connection,
  config: HearthConfig,
  locks: InodeLocks,
): string | undefined {
  const desired = config.durability.journalMode;
  const actual = String(conn.db.pragma("journal_mode", { simple: true })).toLowerCase();
  if (actual === desired) return undefined;
  let blocker: string | undefined;
  try {
    claimStructural(locks, `change the journal mode (${actual} to ${desired}) of`, {
      exclusiveFiles: true,
    });
    try {
      const result = String(
        conn.db.pragma(`journal_mode = ${desired}`, { simple: true }),
      ).toLowerCase();
      if (result === desired) return undefined;
      blocker = `SQLite kept ${result}`;
    } finally {
      locks.endStructural();
    }
  } catch (err) {
    blocker = (err as Error).message;
  }
  return `journal mode of ${conn.path} is ${actual}, not the configured ${desired}: ${blocker}; hearth left it as it is`;
}

/**
 * The writer's write-path commits so far by where their fsync ran
 * (durability().offLoop.commits): a copy of the WalSync's own count, read
 * from memory, so it touches no connection.
 */
export function offLoopCommits(
  writer: Connection | undefined,
  walSync: WalSync | undefined,
): DurabilityReport["offLoop"]["commits"] {
  return { ...(writer?.offLoop ? walSync?.policy?.commits : undefined) };
}

/**
 * Configured versus actual durability, read from SQLite now (C2), never
 * echoed from the configuration. The synchronous level that matters is the
 * one writes commit with: the writer connection's when there is one.
 */
export function readDurability(
  reader: Connection,
  writer: Connection | undefined,
  config: HearthConfig,
  path: string,
  { walSync, searchMerges }: { walSync: WalSync | undefined; searchMerges: MergeDebt },
): DurabilityReport {
  const version = sqliteVersion();
  const fs = inspectFilesystem(path);
  return {
    sqliteVersion: version,
    walResetBug: hasWalResetBug(version),
    journalMode: {
      configured: config.durability.journalMode,
      actual: String(reader.pragma("journal_mode")).toLowerCase(),
    },
    synchronous: {
      configured: config.durability.synchronous,
      actual: synchronousName((writer ?? reader).setting("synchronous")),
    },
    filesystem: { fstype: fs.fstype, magic: fs.magic, walUnsafeReason: fs.walUnsafeReason },
    // The writer's own settings, read back; a read-only store sets neither and reports the configuration.
    journalSizeLimitBytes: writer
      ? Number(writer.setting("journal_size_limit"))
      : config.durability.journalSizeLimitBytes,
    walAutocheckpointPages: writer
      ? Number(writer.setting("wal_autocheckpoint"))
      : config.durability.walAutocheckpointPages,
    // From the live writer: whether its commits really leave fsync and checkpoint to threads.
    offLoop: {
      fsync: Boolean(writer?.offLoop && walSync?.options.fsync),
      checkpoint: Boolean(writer?.offLoop && walSync),
      lastFsync: (writer?.offLoop && walSync?.policy?.lastCommit) || null,
      lastCheckpoint: (writer?.offLoop && walSync?.lastCheckpoint) || null,
      commits: offLoopCommits(writer, walSync),
    },
    searchMerges: writer
      ? searchMerges.stats(
          writer.offLoop && walSync?.threadMerges && walSync.lastCheckpoint !== "commit"
            ? "thread"
            : "writer",
        )
      : null,
  };
}
