/**
 * What an idle profile's connection keeps: a gateway serving 200 profiles
 * keeps every statement its timers prepared on each (issue 44). The
 * handoff watcher polls list("pending") on every profile; while a profile
 * has no pending handoff, the poll is one small statement, and the
 * SELECT * of whole sessions (~18 KiB of SQLite's memory per connection)
 * is never prepared. Counted in cached statements, not bytes.
 */
import { expect, it } from "vitest";
import { openStore, type SqliteStore } from "../../../src/index.js";
import { internals } from "../../../src/store/sqlite/store.js";
import { tempHome } from "../../helpers/home.js";

const cached = (store: SqliteStore) => [
  ...store[internals].cached("writer"),
  ...store[internals].cached("reader"),
];
/** Statements that read whole session rows. */
const wholeRows = (store: SqliteStore) =>
  cached(store).filter((sql) => sql.startsWith("SELECT * FROM sessions WHERE handoff_state"))
    .length;

it("an idle profile's handoff polls prepare one statement; a pending handoff is still listed", async () => {
  const store = (await openStore({ home: tempHome() })) as SqliteStore;
  try {
    const session = await store.sessions.create({ title: "idle" });
    const before = cached(store).length;
    for (let i = 0; i < 10; i++) expect(await store.handoffs.list("pending", 20)).toEqual([]);
    expect(cached(store).length - before).toBe(1);
    expect(wholeRows(store)).toBe(0);

    expect(await store.handoffs.request(session.id, "telegram")).toBe(true);
    const listed = await store.handoffs.list("pending", 20);
    expect(listed.map((s) => s.id)).toEqual([session.id]);
    expect(listed[0]?.handoff?.state).toBe("pending");
    expect(wholeRows(store)).toBe(1);
  } finally {
    await store.close();
  }
});
