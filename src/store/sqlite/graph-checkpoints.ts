import {
  blobRefs,
  type GraphBlob,
  type GraphCheckpointInput,
  type GraphCheckpointKey,
  type GraphCheckpointRecord,
  type GraphCheckpointsSql,
  type GraphListQuery,
  type GraphWrite,
  type GraphWriteBatch,
  graphCheckpointRow,
  graphWriteRow,
} from "../graph-checkpoints.js";
import type { Access } from "./access.js";
import type { Connection } from "./connection.js";
import type { WriteOptions } from "./write-path.js";

/** Graph tables are outside the search index: their writes owe it no merge work. */
const GRAPH_WRITE: WriteOptions = { searchIndex: false };

interface CheckpointRow {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  type: string;
  checkpoint: Uint8Array;
  metadata: string;
  blob_refs: string;
}

interface WriteRow {
  task_id: string;
  idx: number;
  channel: string;
  type: string;
  value: Uint8Array | null;
  task_path: string;
}

/**
 * The graph checkpoint statements on SQLite (../graph-checkpoints.ts
 * decides). Writes go through the store's write path (fair cross-process
 * lock, one IMMEDIATE transaction each); reads run on the read-only
 * connection, each in one read transaction so a row and its values come
 * from one snapshot.
 */
export class SqliteGraphCheckpoints implements GraphCheckpointsSql {
  constructor(private readonly access: Access) {}

  async put(input: GraphCheckpointInput): Promise<void> {
    const { threadId, namespace, checkpointId } = input;
    await this.access.writeTransaction(
      (conn) => {
        // The parent's refs, and which of them hold the version this checkpoint has: one statement.
        const parent = this.parentRefs(conn, input);
        const plan = blobRefs(input, parent.refs);
        let step = plan.next();
        while (!step.done) {
          const q = step.value;
          // A question about a checkpoint is always about the parent's ref at the
          // checkpoint's version (blobRefs): answered already (undefined: not that version).
          step = plan.next(
            "checkpointId" in q
              ? parent.versions.get(q.channel)
              : (
                  conn.stmt(VERSION_REF).get(threadId, namespace, q.version, q.channel) as
                    | { checkpoint_id: string }
                    | undefined
                )?.checkpoint_id,
          );
        }
        const refs = step.value;
        if (input.blobs.length > 0) {
          const blob = conn.stmt(
            `INSERT INTO graph_blobs (thread_id, checkpoint_ns, checkpoint_id, channel, version, type, value)
             VALUES (?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT DO UPDATE SET version = excluded.version, type = excluded.type,
               value = excluded.value`,
          );
          for (const b of input.blobs) {
            blob.run(threadId, namespace, checkpointId, b.channel, b.version, b.type, b.value);
          }
        }
        conn
          .stmt(
            `INSERT INTO graph_checkpoints (thread_id, checkpoint_ns, checkpoint_id,
               parent_checkpoint_id, type, checkpoint, metadata, blob_refs, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
               parent_checkpoint_id = excluded.parent_checkpoint_id, type = excluded.type,
               checkpoint = excluded.checkpoint, metadata = excluded.metadata,
               blob_refs = excluded.blob_refs`,
          )
          .run(...graphCheckpointRow(input, refs, this.access.now()));
      },
      undefined,
      GRAPH_WRITE,
    );
  }

  /**
   * The parent's blob_refs ({channel: checkpoint id}) of the channels
   * `input` has (the only ones blobRefs asks about) and, for each ref
   * whose row holds the channel at the version `input` gives it, that
   * version: one statement. The versions are checked on
   * graph_blobs_by_version alone (every column of it given), never on the
   * table's rows. On a 150 KB messages channel: 8.5 µs for this statement,
   * 142 µs for the blob_refs read and a primary-key lookup per ref it
   * replaced (when graph_blobs was WITHOUT ROWID, schema 7 to 13).
   */
  private parentRefs(
    conn: Connection,
    input: GraphCheckpointInput,
  ): { refs: Record<string, string>; versions: Map<string, string> } {
    const refs = Object.create(null) as Record<string, string>;
    const versions = new Map<string, string>();
    if (input.parentCheckpointId === null) return { refs, versions };
    const wanted = Object.create(null) as Record<string, string>;
    for (const [channel, version] of Object.entries(input.channelVersions)) {
      wanted[channel] = String(version);
    }
    const rows = conn
      .stmt(PARENT_REFS)
      .all(JSON.stringify(wanted), input.threadId, input.namespace, input.parentCheckpointId) as {
      channel: string;
      ref: string;
      version: string | null;
    }[];
    for (const row of rows) {
      refs[row.channel] = row.ref;
      if (row.version !== null) versions.set(row.channel, row.version);
    }
    return { refs, versions };
  }

  async putWrites(batch: GraphWriteBatch): Promise<void> {
    await this.access.writeTransaction(
      (conn) => {
        const insert = conn.stmt(
          `INSERT ${batch.replace ? "OR REPLACE" : "OR IGNORE"} INTO graph_writes (thread_id,
             checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        );
        for (const w of batch.writes) insert.run(...graphWriteRow(batch, w));
      },
      undefined,
      GRAPH_WRITE,
    );
  }

  async deleteThread(threadId: string): Promise<number> {
    return this.access.writeTransaction(
      (conn) => {
        conn.stmt("DELETE FROM graph_writes WHERE thread_id = ?").run(threadId);
        conn.stmt("DELETE FROM graph_blobs WHERE thread_id = ?").run(threadId);
        return conn.stmt("DELETE FROM graph_checkpoints WHERE thread_id = ?").run(threadId).changes;
      },
      undefined,
      GRAPH_WRITE,
    );
  }

  async get(
    threadId: string,
    namespace: string,
    checkpointId: string | undefined,
  ): Promise<GraphCheckpointRecord | undefined> {
    const conn = this.access.read();
    return snapshot(conn, () => {
      const row = (
        checkpointId === undefined
          ? conn
              .stmt(
                `SELECT * FROM graph_checkpoints WHERE thread_id = ? AND checkpoint_ns = ?
                 ORDER BY checkpoint_id DESC LIMIT 1`,
              )
              .get(threadId, namespace)
          : conn
              .stmt(
                `SELECT * FROM graph_checkpoints
                 WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?`,
              )
              .get(threadId, namespace, checkpointId)
      ) as CheckpointRow | undefined;
      return row && toRecord(conn, row);
    });
  }

  async list(query: GraphListQuery): Promise<GraphCheckpointRecord[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (clause: string, ...values: unknown[]) => {
      where.push(clause);
      params.push(...values);
    };
    if (query.threadId !== undefined) add("thread_id = ?", query.threadId);
    if (query.namespace !== undefined) add("checkpoint_ns = ?", query.namespace);
    if (query.before !== undefined) add("checkpoint_id < ?", query.before);
    for (const [key, json] of query.metadata ?? []) {
      // A quoted label: keys with dots, '$' or quotes name one top-level key, never a path.
      add("metadata -> ? = json(?)", `$."${key.replace(/"/g, '\\"')}"`, json);
    }
    if (query.after) {
      const a = query.after;
      add(
        "(checkpoint_id, thread_id, checkpoint_ns) < (?, ?, ?)",
        a.checkpointId,
        a.threadId,
        a.namespace,
      );
    }
    const sql = `SELECT * FROM graph_checkpoints ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC LIMIT +?`;
    const conn = this.access.read();
    return snapshot(conn, () =>
      (conn.stmt(sql).all(...params, query.limit) as CheckpointRow[]).map((row) =>
        toRecord(conn, row),
      ),
    );
  }

  async channelWrites(key: GraphCheckpointKey, channel: string): Promise<GraphWrite[]> {
    const conn = this.access.read();
    return (
      conn
        .stmt(
          `SELECT task_id, idx, channel, type, value, task_path FROM graph_writes
           WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? AND channel = ?
           ORDER BY task_path, task_id, idx`,
        )
        .all(key.threadId, key.namespace, key.checkpointId, channel) as WriteRow[]
    ).map(toWrite);
  }
}

/** Run reads in one read transaction on the read-only connection: one snapshot for all of them. */
function snapshot<T>(conn: Connection, fn: () => T): T {
  return conn.db.transaction(fn)();
}

/**
 * A parent checkpoint's refs of the channels the new checkpoint has, each
 * with the version its row holds when that is the version the new
 * checkpoint gives the channel (null otherwise). A join, not a correlated
 * subquery per ref: that one took 62 µs against 8.5 µs.
 * Parameters: the new checkpoint's {channel: version} as JSON, then the
 * parent's thread, namespace and id. The version is found on the covering
 * index alone (see SqliteGraphCheckpoints.parentRefs).
 */
export const PARENT_REFS = `SELECT r.key AS channel, r.value AS ref, b.version
  FROM graph_checkpoints c CROSS JOIN json_each(c.blob_refs) r CROSS JOIN json_each(?) v
    LEFT JOIN graph_blobs b INDEXED BY graph_blobs_by_version
      ON b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns AND b.channel = r.key
        AND b.version = v.value AND b.checkpoint_id = r.value
  WHERE c.thread_id = ? AND c.checkpoint_ns = ? AND c.checkpoint_id = ? AND v.key = r.key`;

/**
 * The newest checkpoint of a thread holding `version` of `channel`
 * (parameters: thread, namespace, version, channel), on
 * graph_blobs_by_version alone, newest first without a sort.
 */
export const VERSION_REF = `SELECT checkpoint_id FROM graph_blobs INDEXED BY graph_blobs_by_version
  WHERE thread_id = ? AND checkpoint_ns = ? AND version = ? AND channel = ?
  ORDER BY checkpoint_id DESC LIMIT 1`;

/**
 * Each channel's value, looked up by its whole key (graph_blobs_by_key)
 * from the refs the row already holds, then read from the table by rowid. CROSS JOIN fixes the order: joined the other way
 * round, SQLite read every value of the thread (every version of every
 * channel: megabytes for a long conversation) to find a checkpoint's few.
 */
export const BLOBS_OF_REFS = `SELECT b.channel, b.version, b.type, b.value
  FROM json_each(?) r CROSS JOIN graph_blobs b
  WHERE b.thread_id = ? AND b.checkpoint_ns = ? AND b.checkpoint_id = r.value AND b.channel = r.key`;

function toRecord(conn: Connection, row: CheckpointRow): GraphCheckpointRecord {
  const blobs = conn
    .stmt(BLOBS_OF_REFS)
    .all(row.blob_refs, row.thread_id, row.checkpoint_ns) as GraphBlob[];
  // BINARY collation compares UTF-8 bytes: code point order, as LangGraph's writesSortKey needs.
  const writes = conn
    .stmt(
      `SELECT task_id, idx, channel, type, value, task_path FROM graph_writes
       WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?
       ORDER BY task_path, task_id, idx`,
    )
    .all(row.thread_id, row.checkpoint_ns, row.checkpoint_id) as WriteRow[];
  return {
    threadId: row.thread_id,
    namespace: row.checkpoint_ns,
    checkpointId: row.checkpoint_id,
    parentCheckpointId: row.parent_checkpoint_id,
    type: row.type,
    checkpoint: row.checkpoint,
    metadata: row.metadata,
    blobs,
    writes: writes.map(toWrite),
  };
}

function toWrite(row: WriteRow): GraphWrite {
  return {
    taskId: row.task_id,
    idx: row.idx,
    channel: row.channel,
    type: row.type,
    value: row.value,
    taskPath: row.task_path,
  };
}
