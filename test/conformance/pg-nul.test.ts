/**
 * PostgreSQL text cannot hold NUL (U+0000); SQLite's can. The PG modules
 * refuse such a string with a TypeError naming the field, before anything
 * is written (docs/api.md). PostgreSQL only: SQLite stores these as given.
 */
import { describe, expect, it } from "vitest";
import { pgEnabled } from "../helpers/pg.js";
import { rejection } from "./errors.js";
import { postgres } from "./pg-modules.js";

const NUL = "a\u0000b";

async function refused(promise: Promise<unknown>, field: string): Promise<void> {
  const err = await rejection(promise);
  expect(err).toBeInstanceOf(TypeError);
  expect(err.message).toContain(field);
  expect(err.message).toContain("NUL");
}

describe.skipIf(!pgEnabled)("NUL in text on PostgreSQL", () => {
  it("handoffs refuse it in platform, owner and error, and leave the row as it was", async () => {
    const m = await postgres.open();
    const sid = await m.seed.session();
    await refused(m.handoffs.request(sid, NUL), "platform");
    expect((await m.browse.sessionsById([sid]))[0]?.handoff).toBeNull();
    expect(await m.handoffs.request(sid, "http")).toBe(true);
    await refused(m.handoffs.claim(sid, NUL), "owner");
    await refused(m.handoffs.failPending(sid, NUL), "error");
    expect((await m.browse.sessionsById([sid]))[0]?.handoff).toMatchObject({
      state: "pending",
      owner: null,
    });
    expect(await m.handoffs.claim(sid, "gw")).toBe(true);
    await refused(m.handoffs.fail(sid, "gw", NUL), "error");
    await refused(m.handoffs.failOrphans([], NUL), "reason");
    expect((await m.browse.sessionsById([sid]))[0]?.handoff).toMatchObject({
      state: "running",
      owner: "gw",
    });
  });

  it("tokens refuse it in a label and a revocation reason", async () => {
    const m = await postgres.open();
    await refused(m.tokens.createPairing({ label: NUL, ttlMs: 60_000 }), "label");
    expect(await m.tokens.families()).toEqual([]);
    const { familyId } = await m.tokens.createPairing({ ttlMs: 60_000 });
    await refused(m.tokens.revokeFamily(familyId, NUL), "reason");
    expect((await m.tokens.families())[0]?.revokedAt).toBeNull();
  });

  it("job runs refuse it in the job, a note and the output tail, and the run stays as it was", async () => {
    const m = await postgres.open();
    const launcher = { pid: 1, startTicks: 1, bootId: "b" };
    const base = { profile: "default", trigger: "schedule" as const, scheduledAt: 1, launcher };
    await refused(
      m.runs.begin({ ...base, job: NUL }, () => true),
      "job",
    );
    expect(await m.runs.list()).toEqual([]);
    const run = await m.runs.begin({ ...base, job: "backup" }, () => true);
    if (!run.started) throw new Error("expected a start");
    await refused(m.runs.finish(run.id, { outcome: "ok", outputTail: NUL }), "outputTail");
    await refused(m.runs.abandon(run.id, NUL), "note");
    await refused(
      m.runs.record({
        job: "backup",
        profile: "default",
        trigger: "schedule",
        scheduledAt: 2,
        outcome: "missed",
        note: NUL,
      }),
      "note",
    );
    expect((await m.runs.list()).map((r) => [r.id, r.outcome])).toEqual([[run.id, "running"]]);
  });

  it("graph checkpoints refuse it in keys, metadata (raw or escaped) and writes, and store nothing", async () => {
    const m = await postgres.open();
    const g = m.graphCheckpoints;
    const input = {
      threadId: "t",
      namespace: "",
      checkpointId: "1",
      parentCheckpointId: null,
      type: "json",
      checkpoint: new Uint8Array([0]),
      metadata: "{}",
      channelVersions: {},
      blobs: [],
    };
    await refused(g.put({ ...input, threadId: NUL }), "threadId");
    await refused(g.put({ ...input, metadata: `{"k":"${NUL}"}` }), "metadata");
    // The JSON escape is NUL too once parsed, and jsonb (the metadata filter) cannot hold it.
    await refused(g.put({ ...input, metadata: '{"k":"a\\u0000"}' }), "metadata");
    expect(await g.list({ limit: 10 })).toEqual([]);
    // An escaped backslash before "u0000" is text, not NUL.
    await g.put({ ...input, metadata: '{"k":"a\\\\u0000"}' });
    expect(JSON.parse((await g.get("t", "", "1"))!.metadata)).toEqual({ k: "a\\u0000" });
    const key = { threadId: "t", namespace: "", checkpointId: "1" };
    await refused(g.putWrites(key, "task", NUL, [], false), "taskPath");
    await refused(
      g.putWrites(key, "task", "", [{ idx: 0, channel: NUL, type: "json", value: null }], false),
      "channel",
    );
    expect((await g.get("t", "", "1"))!.writes).toEqual([]);
  });
});
