/**
 * What a gateway turn costs on SQLite, counted in statements and
 * transactions, never timed (issue 44). A turn on a known chat reads one
 * statement on the read-only connection, the chat lookup; its message and
 * its reply ride group commits shared with other turns (with the turn
 * lease's take and release inside them: no transaction of their own), and
 * the session it returns comes from the reply's commit. It used to read
 * the session again after the reply (a statement and a read transaction
 * per turn). A gateway remembers each chat's session (ChatSessions) and
 * skips the lookup too: a turn on a remembered chat reads nothing.
 */
import { afterEach, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../../src/config/schema.js";
import { openStore, type SqliteStore, type Store } from "../../../src/index.js";
import { internals } from "../../../src/store/sqlite/store.js";
import { ChatSessions } from "../../../src/turn/chat-sessions.js";
import { GroupCommitter } from "../../../src/turn/group-commit.js";
import { leaseKey } from "../../../src/turn/leases.js";
import { createResponder } from "../../../src/turn/responder.js";
import { runTurn } from "../../../src/turn/run.js";
import { tempHome } from "../../helpers/home.js";
import { until } from "../../helpers/process.js";

const CHATS = 16;
const stores: Store[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

/** One turn on each of the CHATS chats at once, as a gateway's requests would run them. */
function turnOnEveryChat(runtime: Parameters<typeof runTurn>[0]) {
  const deps = {
    responder: createResponder(DEFAULT_CONFIG),
    config: DEFAULT_CONFIG,
    signal: new AbortController().signal,
  };
  return Promise.all(
    Array.from({ length: CHATS }, (_, i) =>
      runTurn(runtime, { platform: "test", chat: `c${i}`, content: `hello ${i}` }, deps),
    ),
  );
}

it("a turn on a known chat reads one statement (the chat lookup) and writes only in group commits", async () => {
  const store = (await openStore({ home: tempHome(), profile: "default" })) as SqliteStore;
  stores.push(store);
  const committer = new GroupCommitter(store, true);
  let commits = 0;
  committer.onBatch = () => {
    commits++;
  };
  const runtime = { profile: "default", store, committer };
  const turns = () => turnOnEveryChat(runtime);
  await turns(); // the chats' sessions exist from here on
  // The first exchanges' automatic titles (after the reply, not awaited) land before the count.
  await until("the first exchanges' titles", async () => {
    const { items } = await store.sessions.list({ limit: 100 });
    return (
      items.length === CHATS &&
      items.every((s) => s.title !== null && (s.metadata as { titledBy?: string })?.titledBy)
    );
  });
  const { uses, connection } = store[internals];
  const writer = connection("writer");
  const reads = uses("reader");
  const transactions = writer.transactions;
  commits = 0;

  const results = await turns();

  // One read per turn: the chat lookup. No read of the session after the reply.
  expect(uses("reader") - reads).toBe(CHATS);
  // Every write transaction is a group commit (the leases ride in them), two per turn at most.
  expect(writer.transactions - transactions).toBe(commits);
  expect(commits).toBeLessThanOrEqual(2 * CHATS);
  for (const r of results) {
    expect(r.reply.content).toBe(`echo: ${r.message.content}`);
    // What the commit returned is what the database holds.
    expect(r.session).toEqual(await store.sessions.get(r.session.id));
    expect(r.session.messageCount).toBe(4);
    expect(await store.meta.get(leaseKey(r.session.id))).toBeNull();
  }
});

it("a gateway's turn on a chat it remembers reads no statement: the check rides in the append", async () => {
  const store = (await openStore({ home: tempHome(), profile: "default" })) as SqliteStore;
  stores.push(store);
  const chats = new ChatSessions();
  const runtime = { profile: "default", store, committer: new GroupCommitter(store, true), chats };
  const turns = () => turnOnEveryChat(runtime);
  const first = await turns();
  expect(chats.size).toBe(CHATS);
  await until("the first exchanges' titles", async () => {
    const { items } = await store.sessions.list({ limit: 100 });
    return items.length === CHATS && items.every((s) => s.title !== null);
  });
  const { uses } = store[internals];
  const reads = uses("reader");

  const results = await turns();

  // The chat lookup is gone: every chat's session came from memory, checked in the commit.
  expect(uses("reader") - reads).toBe(0);
  results.forEach((r, i) => {
    expect(r.session.id).toBe(first[i]!.session.id);
    expect(r.session.messageCount).toBe(4);
  });
});

it("a replayed clientId reports no session from its commit; the turn reads it then", async () => {
  const store = await openStore({ home: tempHome(), profile: "default" });
  stores.push(store);
  const runtime = { profile: "default", store, committer: new GroupCommitter(store, true) };
  const deps = {
    responder: createResponder(DEFAULT_CONFIG),
    config: DEFAULT_CONFIG,
    signal: new AbortController().signal,
  };
  const inbound = { platform: "test", chat: "c", content: "hi", clientId: "k1" };
  const first = await runTurn(runtime, inbound, deps);
  const again = await runTurn(runtime, inbound, deps);
  expect(again.reply.id).toBe(first.reply.id);
  expect(again.session).toEqual(await store.sessions.get(first.session.id));
});
