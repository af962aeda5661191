import { expect, it } from "vitest";
import { openStore, type SqliteStore } from "../../../src/index.js";
import { internals } from "../../../src/store/sqlite/store.js";
import { tempHome } from "../../helpers/home.js";

// A gateway sweeps every profile it serves for idle sessions each minute (and
// once at startup): 200 profiles were 200 write transactions, each a commit
// and an fsync, with nothing to end. Counted on the writer connection: its
// write transactions (the check itself is a probe, which may run on the
// writer while the read-only connection is not open: access.ts).
it("endIdle with nothing idle begins no write transaction; with an idle session, ends it", async () => {
  const store = (await openStore({ home: tempHome() })) as SqliteStore;
  const session = await store.sessions.create({ title: "recent" });
  const writes = () => store[internals].connection("writer").transactions;

  const before = writes();
  expect(await store.sessions.endIdle(60 * 60_000)).toEqual([]);
  expect(writes()).toBe(before);

  expect(await store.sessions.endIdle(-1)).toEqual([session.id]);
  expect(writes()).toBeGreaterThan(before);
  expect((await store.sessions.get(session.id))?.endReason).toBe("idle");
  await store.close();
});

// The same at a gateway's start: failing the handoffs of dead gateways, per profile.
it("failOrphans with no running handoff begins no write transaction", async () => {
  const store = (await openStore({ home: tempHome() })) as SqliteStore;
  const session = await store.sessions.create({ title: "handoff" });
  const writes = () => store[internals].connection("writer").transactions;
  const before = writes();
  expect(await store.handoffs.failOrphans([], "gateway gone")).toEqual([]);
  expect(writes()).toBe(before);

  expect(await store.handoffs.request(session.id, "http")).toBe(true);
  expect(await store.handoffs.claim(session.id, "gateway:dead")).toBe(true);
  expect(await store.handoffs.failOrphans([], "gateway gone")).toEqual([session.id]);
  expect((await store.sessions.get(session.id))?.handoff?.state).toBe("failed");
  await store.close();
});
