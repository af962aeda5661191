// A transcript's JSON (loadJson, loadJsonParts) is built mostly by SQLite
// (src/store/transcript-json.ts, MESSAGE_JSON), and must be, byte for byte,
// JSON.stringify of what load() returns: on the caller's thread and on a
// reader thread, for every kind of window and every kind of message.
import { afterEach, describe, expect, it } from "vitest";
import type { SqliteStore as Store } from "../../../src/index.js";
import type { LoadOptions } from "../../../src/store/messages.js";
import { openSqliteStore, tempHome } from "../../helpers/home.js";

const open: Store[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

/** Every character class JSON escapes or must not: controls, quotes, separators, astral, non-ASCII. */
const TRICKY = [
  "",
  'quote " backslash \\ slash /',
  "controls \u0000\u0001\u0007\b\t\n\u000b\f\r\u001b\u001f del \u007f",
  "separators \u2028 \u2029 bom \ufeff nbsp \u00a0",
  "astral 😀 𝄞 and CJK 灯台, accents é à ü",
  "</script><!-- -->",
  "x".repeat(300),
];

async function corpus(home: string): Promise<string> {
  const store = await openSqliteStore({ home });
  const s = await store.sessions.create({ title: "every kind of message" });
  const add = (message: Parameters<typeof store.messages.append>[1]) =>
    store.messages.append(s.id, message);
  for (const [i, text] of TRICKY.entries()) {
    await add({ role: i % 2 ? "assistant" : "user", content: text.replace("\u0000", "") });
  }
  await add({
    role: "user",
    content: { text: "json content", n: [1.5, -0, 1e21, 2 ** 53], ok: true },
  });
  await add({
    role: "assistant",
    content: "",
    toolCalls: [{ id: "call_1", type: "function", function: { name: "look", arguments: "{}" } }],
    tokensIn: 12,
    tokensOut: 34,
  });
  await add({ role: "tool", content: "the answer \u2028", toolCallId: "call_1", name: "look" });
  await add({ role: "user", content: "with metadata", metadata: { tag: "é", depth: { n: 1 } } });
  await add({ role: "user", content: "with a client id", clientId: "client-1" });
  for (let i = 0; i < 40; i++)
    await add({ role: i % 2 ? "assistant" : "user", content: `turn ${i}` });
  // History: the last ten are rewound (archived, kept with includeHistory).
  const last = await store.messages.tail(s.id, 11);
  await store.messages.rewind(s.id, last[0]!.ordinal);
  for (let i = 0; i < 5; i++) await add({ role: "user", content: `after the rewind ${i}` });
  await store.close();
  return s.id;
}

const WINDOWS: LoadOptions[] = [
  {},
  { includeHistory: true },
  { limit: 7, order: "newest-first" },
  { limit: 5, afterOrdinal: 3 },
  { beforeOrdinal: 12, includeHistory: true, order: "newest-first" },
];

async function expectSameJson(store: Store, id: string): Promise<void> {
  for (const options of WINDOWS) {
    const expected = JSON.stringify(await store.messages.load(id, options));
    const whole = new TextDecoder().decode(await store.messages.loadJson(id, options));
    expect(whole, JSON.stringify(options)).toBe(expected);
    const parts: Uint8Array[] = [];
    for await (const part of await store.messages.loadJsonParts(id, options)) parts.push(part);
    expect(Buffer.concat(parts).toString("utf8"), JSON.stringify(options)).toBe(expected);
  }
}

describe("a transcript's JSON, built by SQLite", () => {
  it("is JSON.stringify of load(), byte for byte, on the caller's thread and on a reader thread", async () => {
    const home = tempHome();
    const id = await corpus(home);
    const plain = await openSqliteStore({ home, role: "reader" });
    open.push(plain);
    await expectSameJson(plain, id);
    const threaded = await openSqliteStore({ home, role: "reader", readerThreads: 1 });
    open.push(threaded);
    await expectSameJson(threaded, id);
    // The corpus has every kind of row: some SQLite builds, some it leaves to JavaScript.
    const all = await plain.messages.load(id, { includeHistory: true });
    expect(all.some((m) => m.toolCalls !== null)).toBe(true);
    expect(all.some((m) => m.metadata !== null)).toBe(true);
    expect(all.some((m) => typeof m.content !== "string")).toBe(true);
    expect(all.some((m) => !m.active)).toBe(true);
  });
});
