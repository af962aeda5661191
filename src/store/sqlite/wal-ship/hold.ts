import Database from "better-sqlite3";
import { HEARTH_APPLICATION_ID } from "../../../files/inspect.js";

/**
 * Read transactions that keep a WAL's frames from being checkpointed away
 * before they are shipped (docs/durability.md#continuous-replication).
 *
 * While a read transaction is open, SQLite lets no checkpoint copy frames
 * past the snapshot it reads (its read mark), and never starts the WAL over
 * (a reader that reads only the database file, mark 0, blocks every copy
 * instead). The replicator always holds one, begun no later than the WAL
 * end it has shipped: it begins the next (`begin`), reads the WAL to its
 * end and ships it, and only then ends the older one (`releaseOlder`). So
 * a checkpoint, in any process, copies only shipped frames, and the WAL
 * starts over only once every frame in it was shipped.
 *
 * The connections are read-only: SQLite never checkpoints through one, not
 * even when it is the last to close.
 */
export class WalHold {
  private readonly spare: Database.Database[] = [];
  /** Open read transactions, oldest first. */
  private readonly held: Database.Database[] = [];

  constructor(readonly path: string) {}

  /** Begin a read transaction (a snapshot of the WAL as of now), keeping the older ones. */
  begin(): void {
    const db = this.spare.pop() ?? this.open();
    try {
      db.exec("BEGIN");
      db.prepare("SELECT count(*) FROM sqlite_schema").get();
    } catch (err) {
      if (db.inTransaction) db.exec("ROLLBACK");
      this.spare.push(db);
      throw err;
    }
    this.held.push(db);
  }

  /** End every read transaction but the newest. */
  releaseOlder(): void {
    while (this.held.length > 1) this.end(this.held.shift()!);
  }

  /** End the newest read transaction (what it covers was not shipped). */
  releaseNewest(): void {
    const db = this.held.pop();
    if (db) this.end(db);
  }

  /** End them all: only when every committed frame is shipped and no write can commit (under the write lock), or when giving a generation up. */
  releaseAll(): void {
    while (this.held.length > 0) this.end(this.held.shift()!);
  }

  get holding(): boolean {
    return this.held.length > 0;
  }

  close(): void {
    this.releaseAll();
    for (const db of this.spare.splice(0)) db.close();
  }

  private end(db: Database.Database): void {
    if (db.inTransaction) db.exec("COMMIT");
    this.spare.push(db);
  }

  private open(): Database.Database {
    const db = new Database(this.path, { readonly: true, fileMustExist: true });
    db.pragma("busy_timeout = 100");
    return db;
  }
}

/** What a restore checks of a rebuilt database: integrity_check, hearth's application id, and its row counts. */
export function verifyRestored(path: string): { sessions: number; messages: number } {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const appId = Number(db.pragma("application_id", { simple: true }));
    if (appId !== HEARTH_APPLICATION_ID) throw new Error(`application_id ${appId} is not hearth's`);
    const problems = (db.pragma("integrity_check") as { integrity_check: string }[])
      .map((r) => r.integrity_check)
      .filter((r) => r !== "ok");
    if (problems.length > 0) throw new Error(`integrity_check: ${problems.slice(0, 3).join("; ")}`);
    const count = (table: string) =>
      Number((db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n);
    return { sessions: count("sessions"), messages: count("messages") };
  } finally {
    db.close();
  }
}
