// The audit trail (docs/security.md#audit-trail) on every backend: a delete,
// an archive and a prune append their row in their own transaction, so the
// act and its record commit together or not at all; rows outlive the
// sessions they name and no sweep removes them.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/index.js";
import { backends, expectHearthError, TestHomes, tick } from "./fixture.js";

describe.each(backends)("audit trail on $name", (backend) => {
  const homes = new TestHomes(backend);
  let store: Store;

  beforeEach(async () => {
    store = await homes.open(homes.makeHome());
  });

  afterEach(async () => {
    await homes.cleanup();
  });

  const remote = { kind: "token" as const, id: "fam-1", via: "dashboard", address: "127.0.0.1" };

  it("a delete records who, what and when; a delete of nothing records nothing", async () => {
    const s = await store.sessions.create();
    const before = Date.now();
    expect(await store.sessions.delete(s.id, { actor: remote })).toBe(true);
    expect(await store.sessions.delete("absent")).toBe(false);
    const rows = await store.audit.list();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      action: "session.delete",
      outcome: "ok",
      actor: remote,
      targets: [s.id],
      detail: null,
    });
    expect(rows[0]!.at).toBeGreaterThanOrEqual(before);
  });

  it("without an actor, the local user and the process kind (library here) are recorded", async () => {
    const s = await store.sessions.create();
    await store.sessions.delete(s.id);
    const [row] = await store.audit.list();
    expect(row!.actor.kind).toBe("local");
    expect(row!.actor.id).toMatch(new RegExp(`^${process.getuid!()}:`));
    expect(row!.actor.via).toBe("library");
    expect(row!.actor.address).toBeNull();
  });

  it("the delete and its audit row commit together: a refused audit row keeps the session", async () => {
    const s = await store.sessions.create();
    await store.messages.append(s.id, { role: "user", content: "keep me" });
    const undo = await backend.refuseInserts(store, "audit_log");
    try {
      await expectHearthError(store.sessions.delete(s.id), backend.dbErrorCode);
      await expectHearthError(store.sessions.setArchived(s.id, true), backend.dbErrorCode);
    } finally {
      await undo();
    }
    const kept = await store.sessions.require(s.id);
    expect(kept.archived).toBe(false);
    expect((await store.messages.load(s.id)).map((m) => m.content)).toEqual(["keep me"]);
    expect(await store.audit.list()).toEqual([]);
  });

  it("a prune's lineage and its audit row commit together: a refused row deletes nothing", async () => {
    const s = await store.sessions.create();
    await store.sessions.end(s.id, "user");
    await tick();
    const undo = await backend.refuseInserts(store, "audit_log");
    try {
      await expectHearthError(store.sessions.prune({ olderThanMs: 0 }), backend.dbErrorCode);
    } finally {
      await undo();
    }
    expect(await store.sessions.get(s.id)).not.toBeNull();
  });

  it("archive and unarchive are recorded; pinning is not", async () => {
    const s = await store.sessions.create();
    await store.sessions.setArchived(s.id, true);
    await store.sessions.setPinned(s.id, true);
    await store.sessions.setArchived(s.id, false, { actor: remote });
    const rows = await store.audit.list();
    expect(rows.map((r) => [r.action, r.actor.kind])).toEqual([
      ["session.unarchive", "token"],
      ["session.archive", "local"],
    ]);
  });

  it("prune records one row per lineage it deleted, and rows outlive later prunes", async () => {
    const a = await store.sessions.create();
    const b = await store.sessions.create({ parentId: a.id });
    const c = await store.sessions.create();
    for (const s of [a, b, c]) await store.sessions.end(s.id, "user");
    await tick();
    const result = await store.sessions.prune({ olderThanMs: 0, dryRun: true });
    expect(result.sessions).toHaveLength(3);
    expect(await store.audit.list()).toEqual([]);
    await store.sessions.prune({ olderThanMs: 0 });
    const rows = await store.audit.list();
    expect(rows.map((r) => r.action)).toEqual(["session.prune", "session.prune"]);
    expect(rows.map((r) => [...r.targets].sort()).sort()).toEqual(
      [[a.id, b.id].sort(), [c.id]].sort(),
    );
    expect(rows[0]!.detail).toEqual({ olderThanMs: 0 });
    // A later sweep (empty sessions too) deletes sessions, never audit rows.
    const d = await store.sessions.create();
    await tick();
    expect(await store.sessions.deleteEmpty()).toEqual([d.id]);
    const after = await store.audit.list();
    expect(after).toHaveLength(3);
    expect(after[0]).toMatchObject({
      action: "session.prune",
      targets: [d.id],
      detail: { empty: true, olderThanMs: 0 },
    });
    expect(await store.sessions.deleteEmpty()).toEqual([]);
    expect(await store.audit.list()).toHaveLength(3);
  });

  it("deleteIfUnchanged is audited as a delete, and only when it deleted", async () => {
    const s = await store.sessions.create();
    const fp = (await store.sessions.fingerprint(s.id))!;
    await store.messages.append(s.id, { role: "user", content: "changed" });
    expect(await store.sessions.deleteIfUnchanged(fp)).toBe(false);
    expect(await store.audit.list()).toEqual([]);
    expect(await store.sessions.deleteIfUnchanged((await store.sessions.fingerprint(s.id))!)).toBe(
      true,
    );
    expect((await store.audit.list())[0]).toMatchObject({
      action: "session.delete",
      targets: [s.id],
      detail: { ifUnchanged: true },
    });
  });

  it("record() appends acts outside the store; list() filters by time and pages by id", async () => {
    const first = await store.audit.record({ action: "export", targets: ["s1"] });
    await tick();
    const cut = Date.now();
    await tick();
    const second = await store.audit.record({
      action: "store.repair",
      outcome: "failed",
      detail: { error: "HEARTH_LOCKED" },
    });
    expect(second).toBeGreaterThan(first);
    expect((await store.audit.list({ since: cut })).map((r) => r.id)).toEqual([second]);
    expect((await store.audit.list({ limit: 1 })).map((r) => r.id)).toEqual([second]);
    expect((await store.audit.list({ before: second })).map((r) => r.id)).toEqual([first]);
    expect((await store.audit.list())[0]).toMatchObject({
      action: "store.repair",
      outcome: "failed",
      targets: [],
      detail: { error: "HEARTH_LOCKED" },
    });
  });

  it("refuses a bad act with HEARTH_INVALID_ARG and writes nothing", async () => {
    const bad: unknown[] = [
      { action: "session.explode" },
      { action: "export", outcome: "maybe" },
      { action: "export", actor: { kind: "root", id: "x", via: "cli" } },
      { action: "export", targets: "s1" },
      { action: "export", detail: [1] },
    ];
    for (const input of bad) {
      await expect(store.audit.record(input as never)).rejects.toMatchObject({
        code: "HEARTH_INVALID_ARG",
      });
    }
    await expect(store.audit.list({ limit: 0 })).rejects.toMatchObject({
      code: "HEARTH_INVALID_ARG",
    });
    expect(await store.audit.list()).toEqual([]);
  });

  it("a refresh token used twice revokes its family with a row in the same transaction", async () => {
    const lifetimes = { accessMs: 60_000, refreshMs: 600_000 };
    const pair = async () =>
      store.tokens.redeemPairing(
        (await store.tokens.createPairing({ ttlMs: 60_000 })).code,
        lifetimes,
      );
    const first = await pair();
    expect((await store.tokens.rotate(first.refreshToken, lifetimes)).kind).toBe("rotated");
    expect((await store.tokens.rotate(first.refreshToken, lifetimes)).kind).toBe("reused");
    expect(await store.audit.list()).toEqual([
      expect.objectContaining({
        action: "token.revoke",
        outcome: "ok",
        actor: { kind: "token", id: first.familyId, via: "library", address: null },
        targets: [first.familyId],
        detail: { reason: "reuse" },
      }),
    ]);
    // A refused row: the revoke rolls back with it (the replay still gets no pair).
    const other = await pair();
    await store.tokens.rotate(other.refreshToken, lifetimes);
    const undo = await backend.refuseInserts(store, "audit_log");
    try {
      await expectHearthError(
        store.tokens.rotate(other.refreshToken, lifetimes),
        backend.dbErrorCode,
      );
    } finally {
      await undo();
    }
    const family = (await store.tokens.families()).find((f) => f.id === other.familyId);
    expect(family?.revokedAt).toBeNull();
    expect(await store.audit.list()).toHaveLength(1);
  });
});
