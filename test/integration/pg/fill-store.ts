/**
 * A SQLite store with every kind of row hearth keeps, written through the
 * public API: sessions (a parent that sorts after its child, owners,
 * metadata, pinned, archived, ended), live and history messages (rewind,
 * compaction, replaceSuffix with an idempotency key), tool calls, unicode,
 * empty strings beside NULLs, meta rows, token families and hashes, job
 * runs, a health sample, graph checkpoints with binary blobs and writes.
 */
import type { Store } from "../../../src/index.js";

export async function fillStore(store: Store): Promise<void> {
  const parent = await store.sessions.create({
    id: "zzz-parent",
    title: "Plans ✓ 日本語 🚀",
    metadata: { tier: "gold", nested: { n: 1, empty: "" } },
    ownerId: "user-1",
  });
  const child = await store.sessions.create({
    id: "aaa-child",
    parentId: parent.id,
    source: "telegram",
    chatKey: "",
  });
  const other = await store.sessions.create({ source: "http", title: "ärger" });
  await store.sessions.setPinned(other.id, true);

  await store.messages.append(parent.id, { role: "system", content: "" });
  await store.messages.append(parent.id, {
    role: "user",
    content: "héllo wörld — naïve café",
    clientId: "c-1",
    metadata: { lang: "fr" },
  });
  await store.messages.append(parent.id, {
    role: "assistant",
    content: null,
    toolCalls: [{ id: "call_1", type: "function", function: { name: "search", arguments: "{}" } }],
    tokensIn: 12,
    tokensOut: 0,
  });
  await store.messages.append(parent.id, {
    role: "tool",
    content: { result: ["a", "b"], emoji: "🎉" },
    toolCallId: "call_1",
    name: "search",
  });
  await store.messages.append(parent.id, { role: "assistant", content: "line1\nline2\ttab" });
  await store.messages.rewind(parent.id, 2);
  await store.messages.append(parent.id, { role: "assistant", content: "after rewind" });
  await store.messages.appendBatch(child.id, [
    { role: "user", content: "one" },
    { role: "assistant", content: "two", name: "" },
  ]);
  await store.messages.compact(child.id, { content: "summary of one and two", tokensOut: 7 });
  const summary = (await store.messages.tail(child.id, 1))[0]!;
  const extra = await store.messages.append(child.id, { role: "user", content: "to be replaced" });
  await store.messages.replaceSuffix(
    child.id,
    summary.ordinal,
    [{ role: "user", content: "replaced" }],
    {
      expectLastOrdinal: extra.ordinal,
      idempotencyKey: "edit-1",
    },
  );
  for (let i = 0; i < 40; i++)
    await store.messages.append(other.id, {
      role: i % 2 ? "assistant" : "user",
      content: `m${i} ${"x".repeat(i)}`,
    });
  await store.sessions.setArchived(other.id, true);
  await store.sessions.end(child.id, "done");

  await store.meta.set("empty-value", "");
  await store.meta.set("unicode", "ключ ✓");

  const pairing = await store.tokens.createPairing({ label: "phone", ttlMs: 60_000 });
  const lifetimes = { accessMs: 60_000, refreshMs: 600_000 };
  const pair = await store.tokens.redeemPairing(pairing.code, lifetimes);
  await store.tokens.rotate(pair.refreshToken, lifetimes);
  const revoked = await store.tokens.createPairing({ ttlMs: 60_000 });
  await store.tokens.revokeFamily(revoked.familyId, "lost");
  // The audit trail: a delete's own row, and an act recorded with a remote actor and detail.
  const doomed = await store.sessions.create({ title: "deleted" });
  await store.sessions.delete(doomed.id);
  await store.audit.record({
    action: "export",
    actor: { kind: "token", id: pair.familyId, via: "dashboard", address: "::1" },
    targets: [child.id],
    detail: { format: "jsonl", note: "ünïcode" },
  });

  await store.runs.record({
    job: "backup",
    profile: "default",
    trigger: "schedule",
    scheduledAt: 1_700_000_000_000,
    outcome: "missed",
    note: "downtime",
  });
  const began = await store.runs.begin(
    {
      job: "prune",
      profile: "default",
      trigger: "manual",
      scheduledAt: 1_700_000_100_000,
      launcher: { pid: process.pid, startTicks: 1, bootId: "boot-1" },
    },
    () => false,
  );
  if (began.started)
    await store.runs.finish(began.id, {
      outcome: "failed",
      exitCode: 1,
      note: "",
      outputTail: "tail ✓",
    });
  await store.stats.record({ minIntervalMs: 0, keepMs: 86_400_000 });

  const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
  await store.graphCheckpoints.put({
    threadId: "t-1",
    namespace: "",
    checkpointId: "cp-1",
    parentCheckpointId: null,
    type: "json",
    checkpoint: bytes,
    metadata: JSON.stringify({ step: 1, source: "input" }),
    channelVersions: { messages: "1", empty: "1" },
    blobs: [
      { channel: "messages", version: "1", type: "bytes", value: bytes.slice(0, 17) },
      { channel: "empty", version: "1", type: "empty", value: null },
    ],
  });
  await store.graphCheckpoints.put({
    threadId: "t-1",
    namespace: "sub",
    checkpointId: "cp-2",
    parentCheckpointId: "cp-1",
    type: "json",
    checkpoint: new Uint8Array(0),
    metadata: "{}",
    channelVersions: { messages: "2" },
    blobs: [
      { channel: "messages", version: "2", type: "bytes", value: new Uint8Array([0, 0, 255]) },
    ],
  });
  await store.graphCheckpoints.putWrites(
    { threadId: "t-1", namespace: "", checkpointId: "cp-1" },
    "task-1",
    "",
    [
      { idx: 0, channel: "messages", type: "bytes", value: new Uint8Array([1, 2, 3]) },
      { idx: 1, channel: "__error__", type: "json", value: null },
    ],
    false,
  );
}
