/**
 * sessions.prune() re-checks every lineage inside the transaction that
 * deletes it (sqlite/prune.ts and pg/prune.ts deleteLineage): a session
 * resumed, pinned or archived after prune chose its candidates is kept, whole
 * lineage and all. The change is made at that exact instant, with no timing
 * luck: the test steps in between the two halves of prune (the candidate
 * read and the deleting transaction) by wrapping the store's own candidate
 * read, and commits the change there through the store's public API.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/index.js";
import type { SessionsSql } from "../../src/store/sessions.js";
import { backends, TestHomes } from "./fixture.js";

/** Run `between` once, after prune read its candidates and before it deletes any. */
function betweenSelectAndDelete(store: Store, between: () => Promise<void>): void {
  const sql = (store.sessions as unknown as { sql: SessionsSql }).sql;
  const read = sql.lineageRows.bind(sql);
  sql.lineageRows = async (dryRun) => {
    const rows = await read(dryRun);
    sql.lineageRows = read;
    await between();
    return rows;
  };
}

describe.each(backends)("sessions.prune re-checks before deleting, on $name", (backend) => {
  const homes = new TestHomes(backend);
  let store: Store;

  beforeEach(async () => {
    store = await homes.open(homes.makeHome());
  });

  afterEach(async () => {
    await homes.cleanup();
  });

  /** An ended session with a message, and a child in its compaction lineage when asked. */
  async function ended(title: string, child = false): Promise<string[]> {
    const s = await store.sessions.create({ title });
    await store.messages.append(s.id, { role: "user", content: title });
    const ids = [s.id];
    if (child)
      ids.push((await store.sessions.create({ title: `${title} child`, parentId: s.id })).id);
    for (const id of ids) await store.sessions.end(id, "user");
    return ids;
  }

  const exists = async (id: string) => (await store.sessions.get(id)) !== null;

  it.each([
    ["resumed", (id: string) => store.sessions.resume(id)],
    ["pinned", (id: string) => store.sessions.setPinned(id, true)],
    ["archived", (id: string) => store.sessions.setArchived(id, true)],
  ] as const)("keeps a session %s between the selection and the delete", async (_, change) => {
    const [kept] = await ended("changed meanwhile");
    const [gone] = await ended("untouched");
    betweenSelectAndDelete(store, async () => {
      await change(kept!);
    });
    const result = await store.sessions.prune({ olderThanMs: 0 });
    expect(result.sessions).toEqual([gone]);
    expect(result).toMatchObject({ lineages: 1, keptLineages: 1 });
    expect(await exists(kept!)).toBe(true);
    expect(await exists(gone!)).toBe(false);
  });

  it("keeps the whole lineage when one member resumed between the selection and the delete", async () => {
    const lineage = await ended("lineage", true);
    betweenSelectAndDelete(store, async () => {
      await store.sessions.resume(lineage[1]!);
    });
    const result = await store.sessions.prune({ olderThanMs: 0 });
    expect(result).toEqual({ sessions: [], lineages: 0, keptLineages: 1 });
    for (const id of lineage) expect(await exists(id)).toBe(true);
  });
});
