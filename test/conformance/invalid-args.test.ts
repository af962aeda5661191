import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store } from "../../src/index.js";
import { backends, TestHomes } from "./fixture.js";

/**
 * API misuse is one thing on both backends: a session id that is not a
 * string is a TypeError (so `instanceof TypeError` holds) carrying the
 * stable code HEARTH_INVALID_ARG, for every sessions and messages method
 * that takes one, and the call changes nothing.
 */

/** Not a string: what a caller mixing up ids and numbers (or a missing value) passes. */
const BAD = 42 as unknown as string;
const message = { role: "user", content: "x" } as const;

type Call = [name: string, run: (store: Store) => unknown];

const sessionCalls: Call[] = [
  ["sessions.get", (s) => s.sessions.get(BAD)],
  ["sessions.require", (s) => s.sessions.require(BAD)],
  ["sessions.getOrCreate", (s) => s.sessions.getOrCreate(BAD)],
  ["sessions.setMetadata", (s) => s.sessions.setMetadata(BAD, { a: 1 })],
  ["sessions.setOwner", (s) => s.sessions.setOwner(BAD, "owner")],
  ["sessions.rename", (s) => s.sessions.rename(BAD, "title")],
  ["sessions.setPinned", (s) => s.sessions.setPinned(BAD, true)],
  ["sessions.setArchived", (s) => s.sessions.setArchived(BAD, true)],
  ["sessions.setHidden", (s) => s.sessions.setHidden(BAD, true)],
  ["sessions.end", (s) => s.sessions.end(BAD, "user")],
  ["sessions.resume", (s) => s.sessions.resume(BAD)],
  ["sessions.delete", (s) => s.sessions.delete(BAD)],
  ["sessions.fingerprint", (s) => s.sessions.fingerprint(BAD)],
];

const messageCalls: Call[] = [
  ["messages.append", (s) => s.messages.append(BAD, message)],
  ["messages.appendBatch", (s) => s.messages.appendBatch(BAD, [message])],
  ["messages.save", (s) => s.messages.save(BAD, [message])],
  ["messages.load", (s) => s.messages.load(BAD)],
  ["messages.loadJson", (s) => s.messages.loadJson(BAD)],
  ["messages.loadJsonParts", (s) => s.messages.loadJsonParts(BAD)],
  ["messages.tail", (s) => s.messages.tail(BAD, 5)],
  ["messages.rewind", (s) => s.messages.rewind(BAD, 0)],
  ["messages.pop", (s) => s.messages.pop(BAD)],
  ["messages.archiveAfter", (s) => s.messages.archiveAfter(BAD, 0, { expectLastOrdinal: 1 })],
  [
    "messages.replaceSuffix",
    (s) => s.messages.replaceSuffix(BAD, 0, [message], { expectLastOrdinal: 1 }),
  ],
  ["messages.compact", (s) => s.messages.compact(BAD, { content: "summary" })],
];

/** Everything a misused call could have changed: every session and its whole history. */
async function snapshot(store: Store): Promise<unknown> {
  const options = { limit: 500, includeArchived: true, includeHidden: true };
  const sessions = (await store.sessions.list(options)).items;
  const transcripts = [];
  for (const s of sessions) {
    transcripts.push(await store.messages.load(s.id, { includeHistory: true }));
  }
  return { sessions, transcripts, counts: await store.counts() };
}

/** What calling `run` did: its synchronous throw or its rejection (fails the test if it succeeds). */
async function misuse(run: () => unknown): Promise<Error & { code?: unknown }> {
  try {
    await run();
  } catch (err) {
    return err as Error & { code?: unknown };
  }
  expect.unreachable("expected the call to fail");
  throw new Error("unreachable");
}

describe.each(backends)("argument misuse on $name", (backend) => {
  const homes = new TestHomes(backend);
  let store: Store;

  // One store for the file's backend: every misuse test snapshots it before and after its call
  // (a call that changed anything fails that test), and the one test that writes (appendMany)
  // asserts its own rows. A fresh store per test (a recycled database emptied and refilled on
  // PostgreSQL) checked nothing more.
  beforeAll(async () => {
    store = await homes.open(homes.makeHome());
    const session = await store.sessions.create({ title: "kept" });
    await store.messages.append(session.id, { role: "user", content: "one" });
    await store.messages.append(session.id, { role: "assistant", content: "two" });
  });

  afterAll(async () => {
    await homes.cleanup();
  });

  it.each([
    ...sessionCalls,
    ...messageCalls,
  ])("%s with a non-string id is a TypeError coded HEARTH_INVALID_ARG and changes nothing", async (_name, run) => {
    const before = await snapshot(store);
    const err = await misuse(() => run(store));
    expect(err).toBeInstanceOf(TypeError);
    expect(err.code).toBe("HEARTH_INVALID_ARG");
    expect(err.message).toMatch(/^(id|sessionId) must be a string, got number 42$/);
    expect(await snapshot(store)).toEqual(before);
  });

  it.each([
    null,
    undefined,
    { id: "x" },
  ])("sessions.get and require refuse %j as an id the same way", async (bad) => {
    for (const run of [
      () => store.sessions.get(bad as never),
      () => store.sessions.require(bad as never),
    ]) {
      const err = await misuse(run);
      expect(err).toBeInstanceOf(TypeError);
      expect(err.code).toBe("HEARTH_INVALID_ARG");
    }
  });

  it("appendMany fails the item with a non-string sessionId alone, coded, and commits the rest", async () => {
    const [session] = (await store.sessions.list()).items;
    const results = await store.messages.appendMany([
      { sessionId: BAD, message },
      { sessionId: session!.id, message: { role: "user", content: "three" } },
    ]);
    expect(results[0]!.ok).toBe(false);
    const error = (results[0] as { error: Error & { code?: unknown } }).error;
    expect(error).toBeInstanceOf(TypeError);
    expect(error.code).toBe("HEARTH_INVALID_ARG");
    expect(results[1]!.ok).toBe(true);
    expect((await store.messages.load(session!.id)).map((m) => m.content)).toEqual([
      "one",
      "two",
      "three",
    ]);
  });

  it("other misuse carries the code too: a limit out of range is a RangeError coded HEARTH_INVALID_ARG", async () => {
    const err = await misuse(() => store.sessions.list({ limit: 0 }));
    expect(err).toBeInstanceOf(RangeError);
    expect(err.code).toBe("HEARTH_INVALID_ARG");
  });

  it("a missing session with a string id is still HEARTH_SESSION_NOT_FOUND, not misuse", async () => {
    expect(await store.sessions.get("no-such-session")).toBeNull();
    const err = await misuse(() => store.sessions.require("no-such-session"));
    expect(err.code).toBe("HEARTH_SESSION_NOT_FOUND");
  });
});
