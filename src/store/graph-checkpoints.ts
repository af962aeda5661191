/**
 * Graph checkpoints (LangGraph's persistence model) as store rows: the
 * checkpoints of a thread, each channel's value once per version, and the
 * pending writes of the tasks that follow a checkpoint. Values arrive
 * already serialized (a type tag and bytes): this layer never interprets
 * them, so the adapter's serializer decides the format. This module is
 * backend-neutral: the argument checks, the page limit and the rule that
 * points an unchanged channel at a stored value; the statements are
 * sqlite/graph-checkpoints.ts and pg/graph-checkpoints.ts
 * (GraphCheckpointsSql). Every write is one transaction; every read comes
 * from one snapshot.
 */

/** Which checkpoint: `namespace` is "" for the root graph. */
export interface GraphCheckpointKey {
  threadId: string;
  namespace: string;
  checkpointId: string;
}

/** One channel's serialized value at one version; `type` "empty" marks a cleared channel. */
export interface GraphBlob {
  channel: string;
  version: string;
  type: string;
  value: Uint8Array | null;
}

/** One pending write of a task. */
export interface GraphWrite {
  taskId: string;
  idx: number;
  channel: string;
  type: string;
  value: Uint8Array | null;
  /** "" when the writer gave none (graph input, Command updates). */
  taskPath: string;
}

export interface GraphCheckpointInput extends GraphCheckpointKey {
  parentCheckpointId: string | null;
  /** The serialized checkpoint without its channel values. */
  type: string;
  checkpoint: Uint8Array;
  /** Metadata as JSON text (list() filters on its top-level keys). */
  metadata: string;
  /** {channel: version} of the checkpoint: unchanged channels are found by it. */
  channelVersions: Record<string, string | number>;
  /** The values of the channels that changed at this checkpoint. */
  blobs: readonly GraphBlob[];
}

export interface GraphCheckpointRecord extends GraphCheckpointKey {
  parentCheckpointId: string | null;
  type: string;
  checkpoint: Uint8Array;
  metadata: string;
  /** The values of the checkpoint's channels (channels without a stored value are absent). */
  blobs: GraphBlob[];
  /** Pending writes in (taskPath, taskId, idx) order, strings by code point. */
  writes: GraphWrite[];
}

export interface GraphListQuery {
  threadId?: string;
  namespace?: string;
  /** Only checkpoints whose id sorts before this one. */
  before?: string;
  /** Top-level metadata keys and the JSON text their value must equal. */
  metadata?: readonly (readonly [key: string, json: string])[];
  limit: number;
  /** The last record of the previous page (keyset paging, newest first). */
  after?: GraphCheckpointKey;
}

/** The largest page list() returns. */
const MAX_GRAPH_PAGE = 1000;

/**
 * What blobRefs() asks while it decides, inside put's transaction: the
 * version stored for `channel` at `checkpointId` (answer: that version), or
 * the newest checkpoint of the thread holding `version` of `channel`
 * (answer: its id); undefined when there is none.
 */
export type RefQuestion =
  | { channel: string; checkpointId: string }
  | { channel: string; version: string };

/** A task's writes against one checkpoint, as putWrites() stores them. */
export interface GraphWriteBatch {
  key: GraphCheckpointKey;
  taskId: string;
  taskPath: string;
  writes: readonly Omit<GraphWrite, "taskId" | "taskPath">[];
  /** Overwrite a write stored under the same (task, idx); else keep it. */
  replace: boolean;
}

/** What a backend does for GraphCheckpoints: the statements, on validated arguments. */
export interface GraphCheckpointsSql {
  /** One transaction: the parent's blob_refs, blobRefs() answered, the blobs and the checkpoint upserted. */
  put(input: GraphCheckpointInput): Promise<void>;
  /** One transaction: the writes inserted, replacing on (task, idx) or keeping what is there. */
  putWrites(batch: GraphWriteBatch): Promise<void>;
  /** One transaction; how many checkpoints went. */
  deleteThread(threadId: string): Promise<number>;
  get(
    threadId: string,
    namespace: string,
    checkpointId: string | undefined,
  ): Promise<GraphCheckpointRecord | undefined>;
  /** The page `query` asks for (its limit checked), newest id first. */
  list(query: GraphListQuery): Promise<GraphCheckpointRecord[]>;
  channelWrites(key: GraphCheckpointKey, channel: string): Promise<GraphWrite[]>;
}

export class GraphCheckpoints {
  constructor(private readonly sql: GraphCheckpointsSql) {}

  /**
   * Store a checkpoint and the values of its changed channels, in one
   * transaction. A channel that did not change points at the value its
   * parent points at (the same version), else at the newest value stored
   * for that version in the thread.
   */
  async put(input: GraphCheckpointInput): Promise<void> {
    checkKey(input);
    await this.sql.put(input);
  }

  /**
   * Store a task's writes against a checkpoint, in one transaction. A write
   * already stored under the same (task, idx) is kept, unless `replace`
   * (special channels such as errors and interrupts overwrite).
   */
  async putWrites(
    key: GraphCheckpointKey,
    taskId: string,
    taskPath: string,
    writes: readonly Omit<GraphWrite, "taskId" | "taskPath">[],
    replace: boolean,
  ): Promise<void> {
    checkKey(key);
    if (typeof taskId !== "string") throw new TypeError("taskId must be a string");
    await this.sql.putWrites({ key, taskId, taskPath, writes, replace });
  }

  /** Delete every checkpoint, value and write of a thread. Returns how many checkpoints went. */
  async deleteThread(threadId: string): Promise<number> {
    if (typeof threadId !== "string") throw new TypeError("threadId must be a string");
    return this.sql.deleteThread(threadId);
  }

  /** One checkpoint, or the newest of the thread and namespace when `checkpointId` is undefined. */
  async get(
    threadId: string,
    namespace: string,
    checkpointId?: string,
  ): Promise<GraphCheckpointRecord | undefined> {
    return this.sql.get(threadId, namespace, checkpointId);
  }

  /** A page of checkpoints, newest id first; pass the last one back as `after` for the next. */
  async list(query: GraphListQuery): Promise<GraphCheckpointRecord[]> {
    if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > MAX_GRAPH_PAGE) {
      throw new RangeError(
        `limit must be an integer from 1 to ${MAX_GRAPH_PAGE}, got ${query.limit}`,
      );
    }
    return this.sql.list(query);
  }

  /** The writes to one channel of a checkpoint, in write order (legacy pending sends). */
  async channelWrites(key: GraphCheckpointKey, channel: string): Promise<GraphWrite[]> {
    return this.sql.channelWrites(key, channel);
  }
}

/**
 * The blob_refs of a new checkpoint ({channel: checkpoint id holding its
 * value}): a changed channel points at the checkpoint itself; an unchanged
 * one at what its parent points at when the version there is the same,
 * else at the newest value stored for its version in the thread. A
 * generator: the backend answers each RefQuestion inside its transaction.
 */
export function* blobRefs(
  input: GraphCheckpointInput,
  parentRefs: Record<string, string>,
): Generator<RefQuestion, Record<string, string>, string | undefined> {
  const changed = new Set(input.blobs.map((b) => b.channel));
  const refs = Object.create(null) as Record<string, string>;
  for (const [channel, v] of Object.entries(input.channelVersions)) {
    const version = String(v);
    if (changed.has(channel)) {
      refs[channel] = input.checkpointId;
      continue;
    }
    const viaParent = parentRefs[channel];
    if (viaParent !== undefined && (yield { channel, checkpointId: viaParent }) === version) {
      refs[channel] = viaParent;
      continue;
    }
    const found = yield { channel, version };
    if (found !== undefined) refs[channel] = found;
  }
  return refs;
}

/**
 * A checkpoint row's values in column order (thread_id, checkpoint_ns,
 * checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata,
 * blob_refs, created_at), for both engines' INSERT.
 */
export function graphCheckpointRow(
  input: GraphCheckpointInput,
  refs: unknown,
  createdAt: number,
): unknown[] {
  return [
    input.threadId,
    input.namespace,
    input.checkpointId,
    input.parentCheckpointId,
    input.type,
    input.checkpoint,
    input.metadata,
    JSON.stringify(refs),
    createdAt,
  ];
}

/** A pending write's values in graph_writes' column order (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path). */
export function graphWriteRow(
  { key, taskId, taskPath }: GraphWriteBatch,
  w: GraphWriteBatch["writes"][number],
): unknown[] {
  return [
    key.threadId,
    key.namespace,
    key.checkpointId,
    taskId,
    w.idx,
    w.channel,
    w.type,
    w.value,
    taskPath,
  ];
}

function checkKey(key: GraphCheckpointKey): void {
  for (const name of ["threadId", "namespace", "checkpointId"] as const) {
    if (typeof key[name] !== "string") throw new TypeError(`${name} must be a string`);
  }
  if (key.threadId === "") throw new TypeError("threadId must not be empty");
  if (key.checkpointId === "") throw new TypeError("checkpointId must not be empty");
}
