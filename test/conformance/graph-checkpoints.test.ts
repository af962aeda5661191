import { describe, expect, it } from "vitest";
import type { GraphCheckpointInput } from "../../src/store/graph-checkpoints.js";
import { rejection } from "./errors.js";
import { backends } from "./pg-modules.js";

const bytes = (...values: number[]) => Uint8Array.from(values);
const text = (s: string) => new TextEncoder().encode(s);

function checkpoint(
  checkpointId: string,
  parentCheckpointId: string | null,
  channelVersions: Record<string, string | number>,
  blobs: GraphCheckpointInput["blobs"],
  metadata: Record<string, unknown> = {},
  threadId = "t1",
  namespace = "",
): GraphCheckpointInput {
  return {
    threadId,
    namespace,
    checkpointId,
    parentCheckpointId,
    type: "json",
    checkpoint: text(`{"id":"${checkpointId}"}`),
    metadata: JSON.stringify(metadata),
    channelVersions,
    blobs,
  };
}

/** Blobs and writes as plain data (Buffer and Uint8Array compare alike). */
// biome-ignore lint/suspicious/noExplicitAny: test data compared structurally
function plain(value: unknown): any {
  if (value instanceof Uint8Array) return [...value];
  if (Array.isArray(value)) return value.map(plain);
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}

/** A record's values by channel (neither backend promises their order). */
const byChannel = (blobs: unknown[]) =>
  plain(blobs).sort((a: { channel: string }, b: { channel: string }) =>
    a.channel < b.channel ? -1 : 1,
  );

describe.each(backends)("graph checkpoints on $name", (backend) => {
  it("stores checkpoints with their changed values and finds unchanged ones through the parent", async () => {
    const m = await backend.open();
    const g = m.graphCheckpoints;
    expect(await g.get("t1", "")).toBeUndefined();
    await g.put(
      checkpoint(
        "0001",
        null,
        { messages: 1, counter: 1, empty: 1 },
        [
          { channel: "messages", version: "1", type: "json", value: text('["hi"]') },
          // Bytes with NUL and high bytes: BYTEA on PostgreSQL, BLOB on SQLite.
          { channel: "counter", version: "1", type: "bytes", value: bytes(0, 255, 0, 7) },
          { channel: "empty", version: "1", type: "empty", value: null },
        ],
        { step: 0, source: "input" },
      ),
    );
    await g.put(
      checkpoint(
        "0002",
        "0001",
        { messages: 2, counter: 1, empty: 1 },
        [{ channel: "messages", version: "2", type: "json", value: text('["hi","there"]') }],
        { step: 1, source: "loop" },
      ),
    );
    const first = await g.get("t1", "", "0001");
    expect(first).toMatchObject({
      threadId: "t1",
      namespace: "",
      checkpointId: "0001",
      parentCheckpointId: null,
      type: "json",
    });
    expect(first!.checkpoint).toBeInstanceOf(Uint8Array);
    expect(new TextDecoder().decode(first!.checkpoint)).toBe('{"id":"0001"}');
    expect(JSON.parse(first!.metadata)).toEqual({ step: 0, source: "input" });
    expect(byChannel(first!.blobs)).toEqual(
      byChannel([
        { channel: "messages", version: "1", type: "json", value: [...text('["hi"]')] },
        { channel: "counter", version: "1", type: "bytes", value: [0, 255, 0, 7] },
        { channel: "empty", version: "1", type: "empty", value: null },
      ]),
    );
    expect(first!.writes).toEqual([]);
    // The newest of the thread when no id is given; the unchanged channels through the parent.
    const latest = await g.get("t1", "");
    expect(latest?.checkpointId).toBe("0002");
    expect(latest?.parentCheckpointId).toBe("0001");
    expect(byChannel(latest!.blobs)).toEqual(
      byChannel([
        { channel: "messages", version: "2", type: "json", value: [...text('["hi","there"]')] },
        { channel: "counter", version: "1", type: "bytes", value: [0, 255, 0, 7] },
        { channel: "empty", version: "1", type: "empty", value: null },
      ]),
    );
    // No parent given: an unchanged channel is found by its version (the newest value of it).
    await g.put(checkpoint("0003", null, { counter: 1, messages: 1 }, []));
    expect(byChannel((await g.get("t1", "", "0003"))!.blobs)).toEqual(
      byChannel([
        { channel: "counter", version: "1", type: "bytes", value: [0, 255, 0, 7] },
        { channel: "messages", version: "1", type: "json", value: [...text('["hi"]')] },
      ]),
    );
    // Putting a checkpoint again replaces it.
    await g.put(checkpoint("0003", "0002", { messages: 2 }, [], { step: 9 }));
    const again = await g.get("t1", "", "0003");
    expect(again?.parentCheckpointId).toBe("0002");
    expect(JSON.parse(again!.metadata)).toEqual({ step: 9 });
    expect(again!.blobs.map((b) => [b.channel, b.version])).toEqual([["messages", "2"]]);
    // Namespaces are separate.
    expect(await g.get("t1", "sub")).toBeUndefined();
    expect(await g.get("t2", "")).toBeUndefined();
  });

  it("keeps a task's first write unless replace, and orders writes by (taskPath, taskId, idx) in code point order", async () => {
    const m = await backend.open();
    const g = m.graphCheckpoints;
    await g.put(checkpoint("0001", null, {}, []));
    const key = { threadId: "t1", namespace: "", checkpointId: "0001" };
    await g.putWrites(
      key,
      "task-b",
      "path-a",
      [
        { idx: 1, channel: "messages", type: "json", value: text("2") },
        { idx: 0, channel: "messages", type: "json", value: text("1") },
      ],
      false,
    );
    await g.putWrites(
      key,
      "task-a",
      "path-a",
      [{ idx: 0, channel: "other", type: "json", value: null }],
      false,
    );
    await g.putWrites(
      key,
      "Task-z",
      "Path-b",
      [{ idx: 0, channel: "messages", type: "json", value: text("0") }],
      false,
    );
    // Kept: a second write under the same (task, idx).
    await g.putWrites(
      key,
      "task-b",
      "path-a",
      [{ idx: 0, channel: "messages", type: "json", value: text("ignored") }],
      false,
    );
    const record = await g.get("t1", "", "0001");
    expect(plain(record!.writes)).toEqual([
      {
        taskId: "Task-z",
        idx: 0,
        channel: "messages",
        type: "json",
        value: [...text("0")],
        taskPath: "Path-b",
      },
      { taskId: "task-a", idx: 0, channel: "other", type: "json", value: null, taskPath: "path-a" },
      {
        taskId: "task-b",
        idx: 0,
        channel: "messages",
        type: "json",
        value: [...text("1")],
        taskPath: "path-a",
      },
      {
        taskId: "task-b",
        idx: 1,
        channel: "messages",
        type: "json",
        value: [...text("2")],
        taskPath: "path-a",
      },
    ]);
    // Replaced: errors and interrupts overwrite.
    await g.putWrites(
      key,
      "task-b",
      "path-a",
      [{ idx: 0, channel: "__error__", type: "json", value: text("boom") }],
      true,
    );
    const messages = await g.channelWrites(key, "messages");
    expect(plain(messages).map((w: { taskId: string; idx: number }) => [w.taskId, w.idx])).toEqual([
      ["Task-z", 0],
      ["task-b", 1],
    ]);
    expect(plain(await g.channelWrites(key, "__error__"))).toEqual([
      {
        taskId: "task-b",
        idx: 0,
        channel: "__error__",
        type: "json",
        value: [...text("boom")],
        taskPath: "path-a",
      },
    ]);
    expect(await g.channelWrites({ ...key, checkpointId: "none" }, "messages")).toEqual([]);
  });

  it("lists newest id first with filters on thread, namespace, before and top-level metadata keys, in keyset pages", async () => {
    const m = await backend.open();
    const g = m.graphCheckpoints;
    await g.put(checkpoint("0001", null, {}, [], { step: 0, source: "input", "a.b": "dotted" }));
    await g.put(
      checkpoint("0002", "0001", {}, [], {
        step: 1,
        source: "loop",
        who: { name: "x", tags: [1, 2] },
      }),
    );
    await g.put(checkpoint("0003", "0002", {}, [], { step: 2, source: "loop", 'q"k': true }));
    await g.put(checkpoint("0002", null, {}, [], { step: 0, source: "input" }, "t2"));
    await g.put(checkpoint("0004", null, {}, [], { step: 0, source: "input" }, "t1", "sub"));
    const keys = (rs: { threadId: string; namespace: string; checkpointId: string }[]) =>
      rs.map((r) => `${r.threadId}/${r.namespace}/${r.checkpointId}`);
    expect(keys(await g.list({ limit: 10 }))).toEqual([
      "t1/sub/0004",
      "t1//0003",
      "t2//0002",
      "t1//0002",
      "t1//0001",
    ]);
    expect(keys(await g.list({ limit: 10, threadId: "t1", namespace: "" }))).toEqual([
      "t1//0003",
      "t1//0002",
      "t1//0001",
    ]);
    expect(keys(await g.list({ limit: 10, threadId: "t1", before: "0003" }))).toEqual([
      "t1//0002",
      "t1//0001",
    ]);
    const meta = (metadata: [string, string][]) =>
      g.list({ limit: 10, threadId: "t1", namespace: "", metadata });
    expect(keys(await meta([["source", '"loop"']]))).toEqual(["t1//0003", "t1//0002"]);
    expect(
      keys(
        await meta([
          ["source", '"loop"'],
          ["step", "1"],
        ]),
      ),
    ).toEqual(["t1//0002"]);
    expect(keys(await meta([["who", JSON.stringify({ name: "x", tags: [1, 2] })]]))).toEqual([
      "t1//0002",
    ]);
    // A key with a dot or a quote is one top-level key, never a path.
    expect(keys(await meta([["a.b", '"dotted"']]))).toEqual(["t1//0001"]);
    expect(keys(await meta([['q"k', "true"]]))).toEqual(["t1//0003"]);
    expect(keys(await meta([["a", '{"b":"dotted"}']]))).toEqual([]);
    expect(keys(await meta([["missing", "null"]]))).toEqual([]);
    // Keyset pages.
    const page1 = await g.list({ limit: 2 });
    expect(keys(page1)).toEqual(["t1/sub/0004", "t1//0003"]);
    const page2 = await g.list({ limit: 2, after: page1[1]! });
    expect(keys(page2)).toEqual(["t2//0002", "t1//0002"]);
    expect(keys(await g.list({ limit: 2, after: page2[1]! }))).toEqual(["t1//0001"]);
    for (const limit of [0, 1001, 1.5])
      expect(await rejection(g.list({ limit }))).toBeInstanceOf(RangeError);
    // A listed record is the record get() returns.
    expect(plain((await g.list({ limit: 1, threadId: "t1", namespace: "" }))[0])).toEqual(
      plain(await g.get("t1", "", "0003")),
    );
  });

  it("deletes a thread with its values and writes; refuses bad keys", async () => {
    const m = await backend.open();
    const g = m.graphCheckpoints;
    await g.put(
      checkpoint("0001", null, { a: 1 }, [
        { channel: "a", version: "1", type: "json", value: text("1") },
      ]),
    );
    await g.put(checkpoint("0002", "0001", { a: 1 }, []));
    await g.put(checkpoint("0001", null, {}, [], {}, "keep"));
    await g.putWrites(
      { threadId: "t1", namespace: "", checkpointId: "0002" },
      "task",
      "",
      [{ idx: 0, channel: "a", type: "json", value: text("w") }],
      false,
    );
    expect(await g.deleteThread("t1")).toBe(2);
    expect(await g.get("t1", "")).toBeUndefined();
    expect(
      await g.channelWrites({ threadId: "t1", namespace: "", checkpointId: "0002" }, "a"),
    ).toEqual([]);
    expect(await g.deleteThread("t1")).toBe(0);
    expect((await g.get("keep", ""))?.checkpointId).toBe("0001");
    // The value of a deleted thread is gone too: a new thread with the same name finds nothing by version.
    await g.put(checkpoint("0009", null, { a: 1 }, []));
    expect((await g.get("t1", "", "0009"))?.blobs).toEqual([]);
    expect(await rejection(g.put(checkpoint("0001", null, {}, [], {}, "")))).toBeInstanceOf(
      TypeError,
    );
    expect(await rejection(g.put({ ...checkpoint("", null, {}, []) }))).toBeInstanceOf(TypeError);
    expect(await rejection(g.deleteThread(1 as never))).toBeInstanceOf(TypeError);
    expect(
      await rejection(
        g.putWrites(
          { threadId: "t1", namespace: "", checkpointId: "1" },
          5 as never,
          "",
          [],
          false,
        ),
      ),
    ).toBeInstanceOf(TypeError);
  });
});
