import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  copyCheckpoint,
  getCheckpointId,
  maxChannelVersion,
  type PendingWrite,
  type SerializerProtocol,
  TASKS,
  WRITES_IDX_MAP,
} from "@langchain/langgraph-checkpoint";
import type { Store } from "../../store/api.js";
import type {
  GraphBlob,
  GraphCheckpointRecord,
  GraphWrite,
} from "../../store/graph-checkpoints.js";
import { type OpenStoreOptions, openStore } from "../../store/open.js";

/** Rows fetched per page while list() iterates. */
const PAGE = 100;
/** One decoder for every put's metadata (stateless between decode() calls). */
const UTF8 = new TextDecoder();

/**
 * A LangGraph checkpoint saver on a hearth store. Checkpoints, channel
 * values and pending writes are rows of the store's own tables, written
 * through its write path: any number of processes can share one store
 * (and one thread), and every write that resolved survives a kill -9.
 *
 * ```ts
 * const checkpointer = await HearthSaver.open({ home: "./.hearth" });
 * const graph = builder.compile({ checkpointer });
 * ```
 */
export class HearthSaver extends BaseCheckpointSaver {
  readonly store: Store;
  private owned = false;

  /** A saver on an open store; closing the store stays the caller's job. */
  constructor(store: Store, serde?: SerializerProtocol) {
    super(serde);
    this.store = store;
  }

  /** Open a store (as openStore() does) and a saver on it; close() closes both. */
  static async open(
    options: OpenStoreOptions = {},
    serde?: SerializerProtocol,
  ): Promise<HearthSaver> {
    const saver = new HearthSaver(await openStore(options), serde);
    saver.owned = true;
    return saver;
  }

  /** Close the store when this saver opened it (HearthSaver.open); otherwise nothing. */
  async close(): Promise<void> {
    if (this.owned) await this.store.close();
  }

  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = config.configurable?.thread_id;
    if (threadId === undefined || threadId === null) return undefined;
    const namespace = namespaceOf(config);
    const checkpointId = getCheckpointId(config) || undefined;
    const record = await this.store.graphCheckpoints.get(
      idString("thread_id", threadId),
      namespace,
      checkpointId === undefined ? undefined : idString("checkpoint_id", checkpointId),
    );
    return record && this.toTuple(record);
  }

  override async *list(
    config: RunnableConfig,
    options: CheckpointListOptions = {},
  ): AsyncGenerator<CheckpointTuple> {
    const threadId = config.configurable?.thread_id;
    const namespace = config.configurable?.checkpoint_ns;
    const before = options.before?.configurable?.checkpoint_id;
    const metadata = Object.entries(options.filter ?? {})
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => [key, filterJson(key, value)] as const);
    let remaining = options.limit === undefined ? Number.POSITIVE_INFINITY : options.limit;
    if (!(remaining >= 0)) throw new RangeError(`limit must be >= 0, got ${options.limit}`);
    let after: GraphCheckpointRecord | undefined;
    while (remaining > 0) {
      const page = await this.store.graphCheckpoints.list({
        ...(threadId ? { threadId: idString("thread_id", threadId) } : {}),
        ...(namespace === undefined || namespace === null
          ? {}
          : { namespace: idString("checkpoint_ns", namespace) }),
        ...(before === undefined ? {} : { before: idString("checkpoint_id", before) }),
        metadata,
        limit: Math.min(PAGE, remaining),
        ...(after ? { after } : {}),
      });
      for (const record of page) {
        yield await this.toTuple(record);
        remaining--;
      }
      if (page.length < PAGE) return;
      after = page[page.length - 1];
    }
  }

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    if (!config.configurable) {
      throw new TypeError("put() needs config.configurable with a thread_id");
    }
    const threadId = config.configurable.thread_id;
    if (threadId === undefined || threadId === null || threadId === "") {
      throw new TypeError(
        'put() needs config.configurable.thread_id: run the graph with { configurable: { thread_id: "..." } }',
      );
    }
    const namespace = namespaceOf(config);
    const parent = config.configurable.checkpoint_id;
    const { channel_values: values, ...rest } = copyCheckpoint(checkpoint);
    const blobs = await Promise.all(
      Object.entries(newVersions).map(async ([channel, version]): Promise<GraphBlob> => {
        if (!(channel in values))
          return { channel, version: String(version), type: "empty", value: null };
        const [type, value] = await this.serde.dumpsTyped(values[channel]);
        return { channel, version: String(version), type, value: buffer(value) };
      }),
    );
    const [type, serialized] = await this.serde.dumpsTyped(rest);
    await this.store.graphCheckpoints.put({
      threadId: idString("thread_id", threadId),
      namespace,
      checkpointId: idString("checkpoint.id", checkpoint.id),
      parentCheckpointId: parent ? idString("checkpoint_id", parent) : null,
      type,
      checkpoint: buffer(serialized),
      metadata: await this.metadataJson(metadata),
      channelVersions: checkpoint.channel_versions,
      blobs,
    });
    return {
      configurable: { thread_id: threadId, checkpoint_ns: namespace, checkpoint_id: checkpoint.id },
    };
  }

  override async putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath?: string,
  ): Promise<void> {
    const threadId = config.configurable?.thread_id;
    const checkpointId = config.configurable?.checkpoint_id;
    if (threadId === undefined || threadId === null || threadId === "") {
      throw new TypeError("putWrites() needs config.configurable.thread_id");
    }
    if (checkpointId === undefined || checkpointId === null || checkpointId === "") {
      throw new TypeError("putWrites() needs config.configurable.checkpoint_id");
    }
    const rows = await Promise.all(
      writes.map(async ([channel, value], idx) => {
        const [type, serialized] = await this.serde.dumpsTyped(value);
        return { idx: WRITES_IDX_MAP[channel] ?? idx, channel, type, value: buffer(serialized) };
      }),
    );
    // Special channels (errors, interrupts) overwrite; ordinary writes are kept as first stored.
    const replace = writes.every(([channel]) => channel in WRITES_IDX_MAP);
    await this.store.graphCheckpoints.putWrites(
      {
        threadId: idString("thread_id", threadId),
        namespace: namespaceOf(config),
        checkpointId: idString("checkpoint_id", checkpointId),
      },
      idString("taskId", taskId),
      taskPath ?? "",
      rows,
      replace,
    );
  }

  override async deleteThread(threadId: string): Promise<void> {
    await this.store.graphCheckpoints.deleteThread(idString("threadId", threadId));
  }

  private async toTuple(record: GraphCheckpointRecord): Promise<CheckpointTuple> {
    const rest = (await this.serde.loadsTyped(record.type, record.checkpoint)) as Omit<
      Checkpoint,
      "channel_values"
    >;
    const channelValues: Record<string, unknown> = {};
    for (const blob of record.blobs) {
      if (blob.type !== "empty") channelValues[blob.channel] = await this.load(blob);
    }
    const checkpoint: Checkpoint = {
      ...rest,
      channel_versions: rest.channel_versions ?? {},
      versions_seen: rest.versions_seen ?? {},
      channel_values: channelValues,
    };
    const { threadId, namespace, parentCheckpointId } = record;
    if (checkpoint.v < 4 && parentCheckpointId !== null) {
      await this.migratePendingSends(checkpoint, {
        threadId,
        namespace,
        checkpointId: parentCheckpointId,
      });
    }
    const pendingWrites: CheckpointPendingWrite[] = await Promise.all(
      record.writes.map(
        async (w) => [w.taskId, w.channel, await this.load(w)] as CheckpointPendingWrite,
      ),
    );
    return {
      config: {
        configurable: {
          thread_id: threadId,
          checkpoint_ns: namespace,
          checkpoint_id: record.checkpointId,
        },
      },
      checkpoint,
      metadata: (await this.serde.loadsTyped("json", record.metadata)) as CheckpointMetadata,
      ...(parentCheckpointId === null
        ? {}
        : {
            parentConfig: {
              configurable: {
                thread_id: threadId,
                checkpoint_ns: namespace,
                checkpoint_id: parentCheckpointId,
              },
            },
          }),
      pendingWrites,
    };
  }

  /** Checkpoints older than format 4 kept pending sends as writes of their parent: move them in. */
  private async migratePendingSends(
    checkpoint: Checkpoint,
    parent: { threadId: string; namespace: string; checkpointId: string },
  ): Promise<void> {
    const sends = await this.store.graphCheckpoints.channelWrites(parent, TASKS);
    checkpoint.channel_values[TASKS] = await Promise.all(sends.map((w) => this.load(w)));
    const versions = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] =
      versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }

  private async load(value: GraphBlob | GraphWrite): Promise<unknown> {
    const bytes = value.value ?? new Uint8Array();
    // A plain Uint8Array, as it was given (the driver hands back Buffers).
    return this.serde.loadsTyped(
      value.type,
      value.type === "bytes" ? new Uint8Array(bytes) : bytes,
    );
  }

  private async metadataJson(metadata: CheckpointMetadata): Promise<string> {
    const [type, serialized] = await this.serde.dumpsTyped(metadata);
    if (type !== "json") {
      throw new TypeError(
        `checkpoint metadata must serialize to JSON, the serializer gave "${type}"`,
      );
    }
    return UTF8.decode(serialized);
  }
}

function namespaceOf(config: RunnableConfig): string {
  const ns = config.configurable?.checkpoint_ns;
  return ns === undefined || ns === null ? "" : idString("checkpoint_ns", ns);
}

function idString(name: string, value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  throw new TypeError(`${name} must be a string, got ${value === null ? "null" : typeof value}`);
}

function filterJson(key: string, value: unknown): string {
  const json = JSON.stringify(value);
  if (json === undefined) {
    throw new TypeError(`list() filter.${key} must be a JSON value, got ${typeof value}`);
  }
  return json;
}

function buffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
