import type {
  GraphBlob,
  GraphCheckpointInput,
  GraphCheckpointKey,
  GraphCheckpointRecord,
  GraphCheckpoints,
  GraphListQuery,
  GraphWrite,
} from "../graph-checkpoints.js";
import type { Public } from "../public.js";
import { refuseNul } from "./convert.js";
import type { PgClient, PgDb } from "./pool.js";

const MAX_PAGE = 1000;

/** JSON text holding the escape \u0000 (not preceded by an escaping backslash): jsonb cannot hold it. */
const JSON_NUL = /(?:^|[^\\])(?:\\\\)*\\u0000/;

/**
 * Graph checkpoints (LangGraph's persistence model) on PostgreSQL, as
 * ../graph-checkpoints.ts: values are BYTEA, metadata stays JSON text and
 * list()'s metadata filter casts it to jsonb in the query (jsonb equality:
 * key order and number spelling do not matter, docs/api.md). Text ordering
 * uses COLLATE "C" (code point order, as SQLite's BINARY collation and
 * LangGraph's sort keys). Reads run in one REPEATABLE READ transaction, so
 * a checkpoint and its values come from one snapshot.
 */
export class PgGraphCheckpoints implements Public<GraphCheckpoints> {
  constructor(private readonly db: PgDb) {}

  async put(input: GraphCheckpointInput): Promise<void> {
    checkKey(input);
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
    const changed = new Set(input.blobs.map((b) => b.channel));
    await this.db.transaction("store a graph checkpoint", async (client) => {
      const refs = Object.create(null) as Record<string, string>;
      const parentRefs = await refsOf(client, threadId, namespace, input.parentCheckpointId);
      for (const [channel, v] of Object.entries(input.channelVersions)) {
        const version = String(v);
        if (changed.has(channel)) {
          refs[channel] = checkpointId;
          continue;
        }
        const viaParent = parentRefs[channel];
        if (viaParent !== undefined) {
          const atParent = await client.query(
            `SELECT version FROM graph_blobs
             WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3 AND channel = $4`,
            [threadId, namespace, viaParent, channel],
          );
          if (atParent.rows[0]?.version === version) {
            refs[channel] = viaParent;
            continue;
          }
        }
        const found = await client.query(
          `SELECT checkpoint_id FROM graph_blobs
           WHERE thread_id = $1 AND checkpoint_ns = $2 AND channel = $3 AND version = $4
           ORDER BY checkpoint_id COLLATE "C" DESC LIMIT 1`,
          [threadId, namespace, channel, version],
        );
        if (found.rows[0]) refs[channel] = found.rows[0].checkpoint_id as string;
      }
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
        [
          threadId,
          namespace,
          checkpointId,
          input.parentCheckpointId,
          input.type,
          input.checkpoint,
          input.metadata,
          JSON.stringify(refs),
          Date.now(),
        ],
      );
    });
  }

  async putWrites(
    key: GraphCheckpointKey,
    taskId: string,
    taskPath: string,
    writes: readonly Omit<GraphWrite, "taskId" | "taskPath">[],
    replace: boolean,
  ): Promise<void> {
    checkKey(key);
    if (typeof taskId !== "string") throw new TypeError("taskId must be a string");
    refuseNul("taskId", taskId);
    refuseNul("taskPath", taskPath);
    for (const w of writes) {
      refuseNul("write channel", w.channel);
      refuseNul("write type", w.type);
    }
    // As SQLite's INSERT OR REPLACE / OR IGNORE on the primary key.
    const onConflict = replace
      ? `DO UPDATE SET channel = excluded.channel, type = excluded.type, value = excluded.value,
           task_path = excluded.task_path`
      : "DO NOTHING";
    await this.db.transaction("store graph writes", async (client) => {
      for (const w of writes) {
        await client.query(
          `INSERT INTO graph_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx,
             channel, type, value, task_path)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
           ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) ${onConflict}`,
          [
            key.threadId,
            key.namespace,
            key.checkpointId,
            taskId,
            w.idx,
            w.channel,
            w.type,
            w.value,
            taskPath,
          ],
        );
      }
    });
  }

  async deleteThread(threadId: string): Promise<number> {
    if (typeof threadId !== "string") throw new TypeError("threadId must be a string");
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
    checkpointId?: string,
  ): Promise<GraphCheckpointRecord | undefined> {
    return this.snapshot("read a graph checkpoint", async (client) => {
      const { rows } =
        checkpointId === undefined
          ? await client.query(
              `SELECT * FROM graph_checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2
               ORDER BY checkpoint_id COLLATE "C" DESC LIMIT 1`,
              [threadId, namespace],
            )
          : await client.query(
              `SELECT * FROM graph_checkpoints
               WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3`,
              [threadId, namespace, checkpointId],
            );
      return (await toRecords(client, rows))[0];
    });
  }

  async list(query: GraphListQuery): Promise<GraphCheckpointRecord[]> {
    if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > MAX_PAGE) {
      throw new RangeError(`limit must be an integer from 1 to ${MAX_PAGE}, got ${query.limit}`);
    }
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
    return this.snapshot("list graph checkpoints", async (client) =>
      toRecords(client, (await client.query(sql, params)).rows),
    );
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

  /** Reads in one REPEATABLE READ transaction: one snapshot for all of them. */
  private snapshot<T>(doing: string, fn: (client: PgClient) => Promise<T>): Promise<T> {
    return this.db.transaction(doing, fn, { isolation: "repeatable read" });
  }
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

/**
 * Records for checkpoint rows, in their order: the values of every row in
 * one query (in each row's blob_refs order, as SQLite's json_each gives
 * them) and the writes in another.
 */
async function toRecords(
  client: PgClient,
  rows: Record<string, unknown>[],
): Promise<GraphCheckpointRecord[]> {
  if (rows.length === 0) return [];
  const keys = [
    rows.map((r) => r.thread_id),
    rows.map((r) => r.checkpoint_ns),
    rows.map((r) => r.checkpoint_id),
  ];
  const blobs = await client.query(
    `SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, b.channel, b.version, b.type, b.value
     FROM unnest($1::text[], $2::text[], $3::text[]) AS k(thread_id, checkpoint_ns, checkpoint_id)
     JOIN graph_checkpoints c USING (thread_id, checkpoint_ns, checkpoint_id)
     CROSS JOIN LATERAL json_each_text(c.blob_refs::json) WITH ORDINALITY AS r(key, value, n)
     JOIN graph_blobs b ON b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns
       AND b.checkpoint_id = r.value AND b.channel = r.key
     ORDER BY r.n`,
    keys,
  );
  const writes = await client.query(
    `SELECT w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id, w.idx, w.channel, w.type,
       w.value, w.task_path
     FROM unnest($1::text[], $2::text[], $3::text[]) AS k(thread_id, checkpoint_ns, checkpoint_id)
     JOIN graph_writes w USING (thread_id, checkpoint_ns, checkpoint_id)
     ORDER BY w.task_path COLLATE "C", w.task_id COLLATE "C", w.idx`,
    keys,
  );
  const blobsOf = group(blobs.rows, (r) => ({
    channel: r.channel as string,
    version: r.version as string,
    type: r.type as string,
    value: r.value as Uint8Array | null,
  }));
  const writesOf = group(writes.rows, toWrite);
  return rows.map((row) => ({
    threadId: row.thread_id as string,
    namespace: row.checkpoint_ns as string,
    checkpointId: row.checkpoint_id as string,
    parentCheckpointId: row.parent_checkpoint_id as string | null,
    type: row.type as string,
    checkpoint: row.checkpoint as Uint8Array,
    metadata: row.metadata as string,
    blobs: blobsOf.get(keyOf(row)) ?? ([] as GraphBlob[]),
    writes: writesOf.get(keyOf(row)) ?? [],
  }));
}

function group<T>(
  rows: Record<string, unknown>[],
  convert: (r: Record<string, unknown>) => T,
): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of rows) {
    const k = keyOf(r);
    const list = out.get(k);
    if (list) list.push(convert(r));
    else out.set(k, [convert(r)]);
  }
  return out;
}

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

function checkKey(key: GraphCheckpointKey): void {
  for (const name of ["threadId", "namespace", "checkpointId"] as const) {
    if (typeof key[name] !== "string") throw new TypeError(`${name} must be a string`);
    refuseNul(name, key[name]);
  }
  if (key.threadId === "") throw new TypeError("threadId must not be empty");
  if (key.checkpointId === "") throw new TypeError("checkpointId must not be empty");
}
