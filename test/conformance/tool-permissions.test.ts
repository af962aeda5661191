// Tool permissions (docs/gateway.md#permission) on every backend: a request
// is stored once per call, the first decision is final, "always" becomes a
// grant of the session in the decision's transaction, and a deleted session
// takes its rows with it.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/index.js";
import { backends, TestHomes } from "./fixture.js";

describe.each(backends)("tool permissions on $name", (backend) => {
  const homes = new TestHomes(backend);
  let store: Store;

  beforeEach(async () => {
    store = await homes.open(homes.makeHome());
  });

  afterEach(async () => {
    await homes.cleanup();
  });

  const ask = (sessionId: string, callId: string, tool = "write_file") =>
    store.toolPermissions.request({
      sessionId,
      callId,
      tool,
      summary: '{"path":"a.txt"}',
      requestedAt: 1_000,
      deadlineAt: 61_000,
    });

  it("stores a request once, lists it pending, and keeps the first decision", async () => {
    const s = await store.sessions.create();
    const row = await ask(s.id, "c1");
    expect(row).toMatchObject({
      callId: "c1",
      tool: "write_file",
      decision: null,
      deadlineAt: 61_000,
    });
    // Asked again (a resumed turn): the same row, its deadline unchanged.
    expect(await store.toolPermissions.request({ ...row, deadlineAt: 99_000 })).toEqual(row);
    expect((await store.toolPermissions.pending(s.id)).map((r) => r.callId)).toEqual(["c1"]);
    const decided = await store.toolPermissions.decide(s.id, "c1", "reject");
    expect(decided).toMatchObject({ decision: "reject", decidedAt: expect.any(Number) });
    expect(await store.toolPermissions.decide(s.id, "c1", "expired")).toMatchObject({
      decision: "reject",
    });
    expect(await store.toolPermissions.pending(s.id)).toEqual([]);
    expect(await store.toolPermissions.decide(s.id, "nope", "reject")).toBeUndefined();
    await expect(
      store.toolPermissions.decide(s.id, "c1", "maybe" as "reject"),
    ).rejects.toBeInstanceOf(RangeError);
  });

  it("allow_always grants the tool for that session only; a deleted session takes its rows", async () => {
    const s = await store.sessions.create();
    const other = await store.sessions.create();
    await ask(s.id, "c1");
    expect(await store.toolPermissions.granted(s.id, "write_file")).toBe(false);
    await store.toolPermissions.decide(s.id, "c1", "allow_always");
    expect(await store.toolPermissions.granted(s.id, "write_file")).toBe(true);
    expect(await store.toolPermissions.granted(s.id, "other_tool")).toBe(false);
    expect(await store.toolPermissions.granted(other.id, "write_file")).toBe(false);
    await store.sessions.delete(s.id);
    expect(await store.toolPermissions.get(s.id, "c1")).toBeUndefined();
    expect(await store.toolPermissions.granted(s.id, "write_file")).toBe(false);
  });
});
