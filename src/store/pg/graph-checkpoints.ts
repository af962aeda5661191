import {
  blobRefs,
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
import { refuseNul } from "./convert.js";
import type { PgClient, PgDb } from "./pool.js";

/** JSON text holding the escape \u0000 (not preceded by an escaping backslash): jsonb cannot hold it. */
const JSON_NUL = /(?:^|[^\\])(?:\\\\)*\\u0000/;

/**
 * The graph checkpoint statements on PostgreSQL (../graph-checkpoints.ts
 * decides): values are BYTEA, metadata stays JSON text and
 * list()'s metadata filter casts it to jsonb in the query (jsonb equality:
 * key order and number spelling do not matter, docs/api.md). Text ordering
 * uses COLLATE "C" (code point order, as SQLite's BINARY collation and
 * LangGraph's sort keys). A read is one statement, so a checkpoint and its
 * values come from one snapshot.
 */
export class PgGraphCheckpoints implements GraphCheckpointsSql {
  constructor(private readonly db: PgDb) {}

  async put(input: GraphCheckpointInput): Promise<void> {
    refuseNulKey(input);
    refuseNul("parentCheckpointId", input.parentCheckpointId);
    refuseNul("type", input.type);
    refuseNul("metadata", input.metadata);
    if (typeof input.metadata === "string" && JSON_NUL.test(input.metadata))
      throw new TypeError(
        "metadata must not contain NUL (the JSON escape \\u0000): PostgreSQL's jsonb cannot hold it",
      );
    for (const b of input.blobs) {
      refuseNul("blob channel", b.channel);
      refuseNul("blob version", b.version);
      refuseNul("blob type", b.type);
    }
    for (const [channel, version] of Object.entries(input.channelVersions)) {
      refuseNul("channelVersions key", channel);
      refuseNul("channelVersions value", version);
    }
    const { threadId, namespace, checkpointId } = input;
    await this.db.transaction("store a graph checkpoint", async (client) => {
      const parentRefs = await refsOf(client, threadId, namespace, input.parentCheckpointId);
      const plan = blobRefs(input, parentRefs);
      let step = plan.next();
      while (!step.done) {
        const q = step.value;
        const { rows } =
          "checkpointId" in q
            ? await client.query(
                `SELECT version AS answer FROM graph_blobs
                 WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3 AND channel = $4`,
                [threadId, namespace, q.checkpointId, q.channel],
              )
            : await client.query(
                `SELECT checkpoint_id AS answer FROM graph_blobs
                 WHERE thread_id = $1 AND checkpoint_ns = $2 AND channel = $3 AND version = $4
                 ORDER BY checkpoint_id COLLATE "C" DESC LIMIT 1`,
                [threadId, namespace, q.channel, q.version],
              );
        step = plan.next(rows[0]?.answer as string | undefined);
      }
      const refs = step.value;
      for (const b of input.blobs) {
        await client.query(
          `INSERT INTO graph_blobs (thread_id, checkpoint_ns, checkpoint_id, channel, version, type, value)
           VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, channel) DO UPDATE SET
             version = excluded.version, type = excluded.type, value = excluded.value`,
          [threadId, namespace, checkpointId, b.channel, b.version, b.type, b.value],
        );
      }
      await client.query(
        `INSERT INTO graph_checkpoints (thread_id, checkpoint_ns, checkpoint_id,
           parent_checkpoint_id, type, checkpoint, metadata, blob_refs, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
           parent_checkpoint_id = excluded.parent_checkpoint_id, type = excluded.type,
           checkpoint = excluded.checkpoint, metadata = excluded.metadata,
           blob_refs = excluded.blob_refs`,
        graphCheckpointRow(input, refs, Date.now()),
      );
    });
  }

  async putWrites(batch: GraphWriteBatch): Promise<void> {
    refuseNulKey(batch.key);
    refuseNul("taskId", batch.taskId);
    refuseNul("taskPath", batch.taskPath);
    for (const w of batch.writes) {
      refuseNul("write channel", w.channel);
      refuseNul("write type", w.type);
    }
    // As SQLite's INSERT OR REPLACE / OR IGNORE on the primary key.
    const onConflict = batch.replace
      ? `DO UPDATE SET channel = excluded.channel, type = excluded.type, value = excluded.value,
           task_path = excluded.task_path`
      : "DO NOTHING";
    await this.db.transaction("store graph writes", async (client) => {
      for (const w of batch.writes) {
        await client.query(
          `INSERT INTO graph_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx,
             channel, type, value, task_path)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
           ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) ${onConflict}`,
          graphWriteRow(batch, w),
        );
      }
    });
  }

  async deleteThread(threadId: string): Promise<number> {
    return this.db.transaction("delete a graph thread", async (client) => {
      await client.query("DELETE FROM graph_writes WHERE thread_id = $1", [threadId]);
      await client.query("DELETE FROM graph_blobs WHERE thread_id = $1", [threadId]);
      const { rowCount } = await client.query(
        "DELETE FROM graph_checkpoints WHERE thread_id = $1",
        [threadId],
      );
      return rowCount ?? 0;
    });
  }

  async get(
    threadId: string,
    namespace: string,
    checkpointId: string | undefined,
  ): Promise<GraphCheckpointRecord | undefined> {
    const [record] =
      checkpointId === undefined
        ? await this.records(
            "read a graph checkpoint",
            `SELECT * FROM graph_checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2
             ORDER BY checkpoint_id COLLATE "C" DESC LIMIT 1`,
            [threadId, namespace],
          )
        : await this.records(
            "read a graph checkpoint",
            `SELECT * FROM graph_checkpoints
             WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3`,
            [threadId, namespace, checkpointId],
          );
    return record;
  }

  async list(query: GraphListQuery): Promise<GraphCheckpointRecord[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    const p = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    if (query.threadId !== undefined) where.push(`thread_id = ${p(query.threadId)}`);
    if (query.namespace !== undefined) where.push(`checkpoint_ns = ${p(query.namespace)}`);
    if (query.before !== undefined) where.push(`checkpoint_id COLLATE "C" < ${p(query.before)}`);
    for (const [key, json] of query.metadata ?? []) {
      // `->` with a text key names one top-level key, never a path.
      where.push(`(metadata::jsonb -> ${p(key)}::text) = ${p(json)}::jsonb`);
    }
    if (query.after) {
      const a = query.after;
      where.push(
        `(checkpoint_id COLLATE "C", thread_id COLLATE "C", checkpoint_ns COLLATE "C") < (${p(a.checkpointId)}, ${p(a.threadId)}, ${p(a.namespace)})`,
      );
    }
    const sql = `SELECT * FROM graph_checkpoints ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY checkpoint_id COLLATE "C" DESC, thread_id COLLATE "C" DESC,
        checkpoint_ns COLLATE "C" DESC LIMIT ${p(query.limit)}`;
    return this.records("list graph checkpoints", sql, params);
  }

  async channelWrites(key: GraphCheckpointKey, channel: string): Promise<GraphWrite[]> {
    const { rows } = await this.db.query(
      "read graph writes",
      `SELECT task_id, idx, channel, type, value, task_path FROM graph_writes
       WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3 AND channel = $4
       ORDER BY task_path COLLATE "C", task_id COLLATE "C", idx`,
      [key.threadId, key.namespace, key.checkpointId, channel],
    );
    return rows.map(toWrite);
  }

  /**
   * The records of the checkpoints `selected` (a SELECT * FROM
   * graph_checkpoints) picks, in its order, with their values and writes:
   * one statement, so one snapshot (and it runs on a reader store too).
   */
  private async records(
    doing: string,
    selected: string,
    params: unknown[],
  ): Promise<GraphCheckpointRecord[]> {
    const { rows } = await this.db.query(doing, recordsSql(selected), params);
    const records = new Map<string, GraphCheckpointRecord>();
    for (const r of rows) {
      const key = keyOf(r);
      if (r.kind === "c") {
        records.set(key, {
          threadId: r.thread_id as string,
          namespace: r.checkpoint_ns as string,
          checkpointId: r.checkpoint_id as string,
          parentCheckpointId: r.parent_checkpoint_id as string | null,
          type: r.type as string,
          checkpoint: r.checkpoint as Uint8Array,
          metadata: r.metadata as string,
          blobs: [],
          writes: [],
        });
      } else if (r.kind === "b") {
        records.get(key)?.blobs.push({
          channel: r.channel as string,
          version: r.version as string,
          type: r.type as string,
          value: r.value as Uint8Array | null,
        });
      } else {
        records.get(key)?.writes.push(toWrite(r));
      }
    }
    return [...records.values()];
  }
}

/**
 * Checkpoint rows ("c", newest id first, as every selection orders them), then their values
 * ("b", in blob_refs order, as SQLite's json_each gives them), then their
 * writes ("w", by task_path, task_id, idx in code point order), as one
 * result: the rows of each kind ordered within it.
 */
function recordsSql(selected: string): string {
  return `WITH c AS (
  SELECT s.*, row_number() OVER (ORDER BY s.checkpoint_id COLLATE "C" DESC,
    s.thread_id COLLATE "C" DESC, s.checkpoint_ns COLLATE "C" DESC) AS n
  FROM (${selected}) s)
SELECT 'c' AS kind, 0 AS part, c.n AS n, c.thread_id, c.checkpoint_ns, c.checkpoint_id,
  c.parent_checkpoint_id, c.type, c.checkpoint, c.metadata,
  NULL::text AS channel, NULL::text AS version, NULL::bytea AS value,
  NULL::text AS task_id, NULL::int AS idx, NULL::text AS task_path
FROM c
UNION ALL
SELECT 'b', 1, r.n, c.thread_id, c.checkpoint_ns, c.checkpoint_id,
  NULL, b.type, NULL, NULL, b.channel, b.version, b.value, NULL, NULL, NULL
FROM c CROSS JOIN LATERAL json_each_text(c.blob_refs::json) WITH ORDINALITY AS r(key, value, n)
JOIN graph_blobs b ON b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns
  AND b.checkpoint_id = r.value AND b.channel = r.key
UNION ALL
SELECT 'w', 2, row_number() OVER (ORDER BY w.task_path COLLATE "C", w.task_id COLLATE "C", w.idx),
  c.thread_id, c.checkpoint_ns, c.checkpoint_id,
  NULL, w.type, NULL, NULL, w.channel, NULL, w.value, w.task_id, w.idx, w.task_path
FROM c JOIN graph_writes w ON w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns
  AND w.checkpoint_id = c.checkpoint_id
ORDER BY part, n`;
}

async function refsOf(
  client: PgClient,
  threadId: string,
  namespace: string,
  checkpointId: string | null,
): Promise<Record<string, string>> {
  if (checkpointId === null) return {};
  const { rows } = await client.query(
    `SELECT blob_refs FROM graph_checkpoints
     WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3`,
    [threadId, namespace, checkpointId],
  );
  return rows[0] ? (JSON.parse(rows[0].blob_refs as string) as Record<string, string>) : {};
}

const keyOf = (r: Record<string, unknown>) =>
  JSON.stringify([r.thread_id, r.checkpoint_ns, r.checkpoint_id]);

function toWrite(row: Record<string, unknown>): GraphWrite {
  return {
    taskId: row.task_id as string,
    idx: row.idx as number,
    channel: row.channel as string,
    type: row.type as string,
    value: row.value as Uint8Array | null,
    taskPath: row.task_path as string,
  };
}

/** The key's ids as PostgreSQL text can hold them (../graph-checkpoints.ts checked their types). */
function refuseNulKey(key: GraphCheckpointKey): void {
  for (const name of ["threadId", "namespace", "checkpointId"] as const) refuseNul(name, key[name]);
}
