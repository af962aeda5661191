import { accessSync, constants, lstatSync, type Stats } from "node:fs";
import { dirname } from "node:path";
import { backupsDir, databasePath, profileDir } from "../../config/paths.js";
import type { HearthConfig } from "../../config/schema.js";
import { HearthError, isHearthError } from "../../errors.js";
import { createDatabaseFile, ensurePrivateDir } from "../../files/create.js";
import {
  assertOurs,
  assertSafeFile,
  assertSafeSidecars,
  assertSingleName,
  inodeKey,
  lstatOrNull,
  readHeader,
} from "../../files/inspect.js";
import { backupFlagRaised } from "../../process/backup-flag.js";
import { processKind } from "../../process/kind.js";
import type { Logger } from "../logger.js";
import type { ConnectionRole } from "../types.js";
import type { Connection } from "./connection.js";
import { applyJournalMode, assertWalAllowed } from "./durability.js";
import { migrate, schemaTooNew, userVersion } from "./migrate.js";
import { LATEST_SCHEMA_VERSION } from "./migrations.js";
import { restQuietly } from "./quiet-connections.js";
import { createEntry, type DatabaseEntry, dropEntryIfIdle, findEntry } from "./registry.js";
import { assertNoRemovedIndex } from "./removed-index.js";
import { SqliteStore } from "./store.js";

const warned = new Set<string>();

/** What the neutral openStore() resolved, for a SQLite store. */
export interface SqliteOpenRequest {
  home: string;
  profile: string;
  role: ConnectionRole;
  /** A writer may create the file when it is missing (a reader never does). Default true. */
  create?: boolean;
  config: HearthConfig;
  logger?: Logger | undefined;
  readerThreads?: number | boolean | undefined;
}

/**
 * Open (creating if needed) a profile's SQLite store: the whole opening
 * sequence of docs/architecture.md. A read-only mount is HEARTH_READ_ONLY_FS.
 */
export async function openSqliteStore(request: SqliteOpenRequest): Promise<SqliteStore> {
  try {
    return await open(request);
  } catch (err) {
    throw readOnlyFs(err, databasePath(request.home, request.profile)) ?? err;
  }
}

/**
 * A read-only mount (EROFS) as the coded refusal it is: Node's raw EROFS
 * from creating or opening a file, or SQLite's "unable to open database
 * file" for a reader whose -shm cannot be created, when the directory is
 * indeed on a read-only filesystem (access(W_OK) says EROFS). Undefined
 * for any other error.
 */
function readOnlyFs(err: unknown, path: string): HearthError | undefined {
  const raw = (err as { code?: unknown }).code === "EROFS";
  const cantOpen =
    isHearthError(err, "HEARTH_SQLITE") && /SQLITE_CANTOPEN/.test(String(err.sqliteCode));
  if (!raw && !cantOpen) return undefined;
  if (!raw) {
    try {
      accessSync(dirname(path), constants.W_OK);
      return undefined; // writable: SQLite could not open it for another reason
    } catch (e) {
      if ((e as { code?: unknown }).code !== "EROFS") return undefined;
    }
  }
  return new HearthError(
    "HEARTH_READ_ONLY_FS",
    `cannot open ${path}: its filesystem is mounted read-only`,
    {
      resource: path,
      hint: "remount it read-write, or copy the store to a writable disk and use --home there",
      cause: err,
    },
  );
}

async function open(options: SqliteOpenRequest): Promise<SqliteStore> {
  const { home, profile, role, config } = options;
  const path = databasePath(home, profile);

  let stats = checkPath(path);
  if (!stats) {
    if (role === "reader" || options.create === false) {
      throw new HearthError("HEARTH_STORE_NOT_FOUND", `no store at ${path}`, {
        resource: path,
        hint: `nothing has written to profile ${profile} yet: check the profile's name (hearth ps lists the home's profiles); a writer creates it (openStore() from the library, or npm start for a demo home)`,
      });
    }
    // Refuse WAL where it cannot be shared before anything is created: a
    // refusal leaves the directory as it found it.
    if (config.durability.journalMode === "wal") assertWalAllowed(path, "configured");
    ensurePrivateDir(home);
    ensurePrivateDir(profileDir(home, profile));
    createDatabaseFile(path);
    stats = checkPath(path);
    if (!stats)
      throw new HearthError(
        "HEARTH_PATH_NOT_REGULAR",
        `${path} vanished while it was being created`,
        { resource: path },
      );
  }
  const key = inodeKey(stats);
  const warnings: string[] = [];
  // The first store of this process on the database: no connection of the
  // process may still be on removed -wal/-shm (src/store/sqlite/removed-index.ts).
  let entry = findEntry(key);
  const created = !entry;
  if (!entry) assertNoRemovedIndex(path, key, "open");
  entry ??= createEntry(key, path);
  try {
    // A writer holds the structural gate shared from here until close (P4).
    if (role === "writer") await entry.locks.enterWriter(config.store.gateWaitMs);
    try {
      attach(entry, role, config, home, profile, warnings);
    } catch (err) {
      if (role === "writer") entry.locks.leaveWriter();
      throw err;
    }
    entry.locks.enterReader();
  } catch (err) {
    dropEntryIfIdle(entry);
    throw err;
  }
  for (const warning of warnings) {
    if (warned.has(warning)) continue;
    warned.add(warning);
    options.logger?.warn({ event: "store.config_not_applied", path }, warning);
  }
  // The path must still be the inode we checked (no swap between check and open).
  const after = lstatSync(path);
  if (inodeKey(after) !== key || after.isSymbolicLink()) {
    entry.locks.leaveReader();
    if (role === "writer") entry.locks.leaveWriter();
    releaseRoles(entry, role);
    throw new HearthError(
      "HEARTH_PATH_SYMLINK",
      `refusing ${path}: it was replaced while hearth opened it`,
      {
        resource: path,
        hint: "find the process that replaces files in the hearth home",
      },
    );
  }
  if (role === "writer") {
    const dir = profileDir(home, profile);
    entry.walSync?.policy?.watchBackups(() => backupFlagRaised(dir));
    entry.locks.mark(dir, profile, processKind(), {
      synchronous: entry.connection("writer")!.synchronous,
      offLoop: !entry.walSync
        ? "none"
        : entry.walSync.options.fsync
          ? "fsync+checkpoint"
          : "checkpoint",
    });
  }
  // Opened, and nothing has asked the store anything yet: connections this
  // open created rest until their first use (Connection.rest()), and the
  // next store this process opens reuses the memory they gave back.
  if (created) for (const r of ["writer", "reader"] as const) restQuietly(entry.connection(r));
  return new SqliteStore({
    home,
    profile,
    path,
    role,
    config,
    entry,
    warnings,
    readerThreads: readerThreadCount(options.readerThreads, config.store.readerThreads),
    reattach: async () => {
      checkPath(path);
      const ghost = await entry.reopen(config);
      if (ghost.kind === "saved")
        options.logger?.warn(
          { event: "store.ghost_wal_saved", path, commits: ghost.commits, frames: ghost.frames },
          `the -wal of ${path} was removed under this process; its ${ghost.commits} commit(s) not yet in the database were checkpointed into it before reattaching`,
        );
    },
  });
}

/** lstat-only checks of the database and its sidecars (F1). Null when the database is absent. */
function checkPath(path: string): Stats | null {
  const stats = lstatOrNull(path);
  if (stats) {
    assertSafeFile(path, stats);
    assertSingleName(path, stats);
  }
  assertSafeSidecars(path);
  return stats;
}

function attach(
  entry: DatabaseEntry,
  role: ConnectionRole,
  config: HearthConfig,
  home: string,
  profile: string,
  warnings: string[],
): void {
  const firstInProcess = entry.idle;
  if (firstInProcess) {
    // Only now, with no connection to this inode in the process, may a descriptor be opened and closed on it (F2).
    const header = readHeader(entry.path);
    assertOurs(entry.path, header);
    // A quiet store cut short: refused before SQLite opens it (and creates
    // -wal and -shm that the refusal would leave behind).
    if (header.shorterThanHeader && !lstatOrNull(`${entry.path}-wal`)) {
      throw new HearthError(
        "HEARTH_NOT_SQLITE",
        `refusing ${entry.path}: it is shorter than its header says (truncated)`,
        {
          resource: entry.path,
          hint: `move ${entry.path} aside and restore a backup (hearth restore)`,
        },
      );
    }
    if (header.userVersion > LATEST_SCHEMA_VERSION) {
      throw schemaTooNew(entry.path, header.userVersion, LATEST_SCHEMA_VERSION);
    }
    if (header.wal) assertWalAllowed(entry.path, "file");
    if (config.durability.journalMode === "wal" && !header.wal)
      assertWalAllowed(entry.path, "configured");
  }
  if (role === "writer") {
    const locks = entry.locks;
    entry.acquire("writer", config, (conn) => {
      if (!firstInProcess) return;
      const warning = applyJournalMode(conn, config, locks);
      if (warning) warnings.push(warning);
      migrate(conn, { backupsDir: backupsDir(home), profile, locks });
    });
  }
  try {
    // A writer store has just opened (and migrated) the database through its
    // writer: its read-only connection opens on its first read. A reader
    // store reads at once, and its open reports what it cannot read.
    if (role === "writer") entry.reserveReader(config, (conn) => assertReadable(conn));
    else entry.acquire("reader", config, (conn) => assertReadable(conn));
  } catch (err) {
    if (role === "writer") entry.release("writer");
    throw err;
  }
  warnings.push(...connectionMismatches(entry, role, config, !firstInProcess));
}

/**
 * Settings SQLite reports differently from the configuration. A store opened
 * on a database this process already holds shares its connections (C1), so
 * its own durability settings cannot apply: say so.
 */
function connectionMismatches(
  entry: DatabaseEntry,
  role: ConnectionRole,
  config: HearthConfig,
  shared: boolean,
): string[] {
  const conn = entry.connection(role === "writer" ? "writer" : "reader")!;
  const warnings: string[] = [];
  const why = shared
    ? `this process already holds ${entry.path} through a shared connection; hearth left it as it is`
    : "SQLite did not take the setting";
  if (conn.synchronous !== config.durability.synchronous) {
    warnings.push(
      `synchronous of ${entry.path} is ${conn.synchronous}, not the configured ${config.durability.synchronous}: ${why}`,
    );
  }
  // A journal mode that could not be changed is reported by applyJournalMode.
  if (!shared) return warnings;
  const journal = String(conn.pragma("journal_mode")).toLowerCase();
  if (journal !== config.durability.journalMode) {
    warnings.push(
      `journal mode of ${entry.path} is ${journal}, not the configured ${config.durability.journalMode}: ${why}`,
    );
  }
  return warnings;
}

function assertReadable(conn: Connection): void {
  const version = userVersion(conn);
  // Version 0 is a file no writer has finished creating (another process
  // may be creating it this instant): no store yet, not an old one. A
  // reader that creates stores on demand (the dashboard) then opens a
  // writer, which waits for that creation, instead of failing.
  if (version === 0) {
    throw new HearthError("HEARTH_STORE_NOT_FOUND", `no store at ${conn.path} yet`, {
      resource: conn.path,
      hint: "the file exists but no writer has created the store in it yet (one may be doing so now); a writer creates it",
    });
  }
  if (version > LATEST_SCHEMA_VERSION)
    throw schemaTooNew(conn.path, version, LATEST_SCHEMA_VERSION);
  if (version < LATEST_SCHEMA_VERSION) {
    throw new HearthError(
      "HEARTH_SCHEMA_OUTDATED",
      `the schema of ${conn.path} is version ${version}; this build reads version ${LATEST_SCHEMA_VERSION}`,
      {
        resource: conn.path,
        hint: "open the store once with a writer (any hearth command that writes) to migrate it",
      },
    );
  }
}

function releaseRoles(entry: DatabaseEntry, role: ConnectionRole): void {
  entry.release("reader");
  if (role === "writer") entry.release("writer");
}

function readerThreadCount(option: number | boolean | undefined, configured: number): number {
  if (option === undefined || option === false) return 0;
  if (option === true) return configured;
  if (!Number.isInteger(option) || option < 0 || option > 8) {
    throw new RangeError(
      `options.readerThreads must be true, false or an integer from 0 to 8, got ${option}`,
    );
  }
  return option;
}
