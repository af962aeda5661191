/**
 * Selecting and opening the PostgreSQL store: the URL from options, config
 * and environment, the refusals of a bad URL and of a reader without a
 * schema, read-only readers, NUL refusals, and search's literal rule
 * against the real server.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { HearthError, isHearthError, openStore, type Store } from "../../../src/index.js";
import { toTsQuery } from "../../../src/store/pg/search.js";
import { tempHome } from "../../helpers/home.js";
import { freshPgDatabase, pgEnabled } from "../../helpers/pg.js";

const stores: Store[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

async function open(options: Parameters<typeof openStore>[0]): Promise<Store> {
  const store = await openStore(options);
  stores.push(store);
  return store;
}

function writeConfig(home: string, config: unknown): void {
  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeFileSync(join(home, "config.json"), JSON.stringify(config), { mode: 0o600 });
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    return isHearthError(err) ? err.code : `${(err as Error).name}: ${(err as Error).message}`;
  }
  return "resolved";
}

describe("store.url", () => {
  it("refuses a URL that is not postgres:// with HEARTH_STORE_URL_INVALID, from every layer, creating nothing", async () => {
    const home = tempHome();
    for (const url of ["mysql://h/db", "not a url", "postgres://host/", "postgres:///db"]) {
      expect(await codeOf(openStore({ home, url, env: {} }))).toBe("HEARTH_STORE_URL_INVALID");
      expect(await codeOf(openStore({ home, env: { HEARTH_STORE_URL: url } }))).toBe(
        "HEARTH_STORE_URL_INVALID",
      );
    }
    expect(existsSync(home)).toBe(false);
    writeConfig(home, { store: { url: "http://x/y" } });
    expect(await codeOf(openStore({ home, env: {} }))).toBe("HEARTH_STORE_URL_INVALID");
  });

  it("masks the password in the refusal", async () => {
    const err = await openStore({ home: tempHome(), url: "mysql://u:hunter2@h/db", env: {} }).catch(
      (e: unknown) => e as HearthError,
    );
    expect(err).toBeInstanceOf(HearthError);
    expect(JSON.stringify((err as HearthError).toJSON())).not.toContain("hunter2");
  });
});

describe.skipIf(!pgEnabled)("opening a PostgreSQL store", () => {
  it("is selected by options, HEARTH_STORE_URL and config.json, and opens the same database", async () => {
    const url = await freshPgDatabase();
    const byOption = await open({ home: tempHome(), url, env: {} });
    expect(byOption.backend).toBe("postgres");
    const s = await byOption.sessions.create({ title: "one" });
    const byEnv = await open({ home: tempHome(), env: { HEARTH_STORE_URL: url } });
    expect(byEnv.backend).toBe("postgres");
    expect((await byEnv.sessions.require(s.id)).title).toBe("one");
    const home = tempHome();
    writeConfig(home, { store: { url } });
    const byFile = await open({ home, env: {} });
    expect(await byFile.counts()).toMatchObject({ sessions: 1 });
    expect(byFile.path).not.toContain("hearth_test@");
    expect(byFile.path).toContain("***");
  });

  it("refuses a reader of a database without hearth's schema (HEARTH_STORE_NOT_FOUND) and creates nothing", async () => {
    const url = await freshPgDatabase();
    expect(await codeOf(openStore({ home: tempHome(), url, role: "reader", env: {} }))).toBe(
      "HEARTH_STORE_NOT_FOUND",
    );
    const writer = await open({ home: tempHome(), url, env: {} });
    expect(await writer.counts()).toEqual({
      sessions: 0,
      messages: 0,
      activeMessages: 0,
      archivedMessages: 0,
    });
  });

  it("a reader reads and refuses every write with HEARTH_READ_ONLY", async () => {
    const url = await freshPgDatabase();
    const writer = await open({ home: tempHome(), url, env: {} });
    const s = await writer.sessions.create();
    await writer.messages.append(s.id, { role: "user", content: "hi" });
    const reader = await open({ home: tempHome(), url, role: "reader", env: {} });
    expect((await reader.messages.load(s.id)).map((m) => m.content)).toEqual(["hi"]);
    expect(await codeOf(reader.messages.append(s.id, { role: "user", content: "no" }))).toBe(
      "HEARTH_READ_ONLY",
    );
    expect(await codeOf(reader.sessions.create())).toBe("HEARTH_READ_ONLY");
    expect(await codeOf(reader.meta.set("k", "v"))).toBe("HEARTH_READ_ONLY");
    expect(await writer.counts()).toMatchObject({ sessions: 1, messages: 1 });
  });

  it("refuses text holding NUL with a TypeError naming the field, and writes nothing", async () => {
    const url = await freshPgDatabase();
    const store = await open({ home: tempHome(), url, env: {} });
    const s = await store.sessions.create();
    const before = await store.counts();
    expect(
      await codeOf(store.messages.append(s.id, { role: "user", content: "a\u0000b" })),
    ).toMatch(/^TypeError: message\.content contains a NUL/);
    expect(
      await codeOf(
        store.messages.appendBatch(s.id, [
          { role: "user", content: "fine" },
          { role: "user", content: "x", clientId: "c\u0000" },
        ]),
      ),
    ).toMatch(/^TypeError: message\.clientId/);
    expect(await codeOf(store.sessions.create({ title: "t\u0000" }))).toMatch(/^TypeError: title/);
    expect(await codeOf(store.meta.set("k", "\u0000"))).toMatch(/^TypeError: value/);
    expect(await store.counts()).toEqual(before);
    // An id with NUL names no session, as on SQLite (never a server error).
    expect(await store.sessions.get("a\u0000b")).toBeNull();
    expect(await codeOf(store.sessions.require("a\u0000b"))).toBe("HEARTH_SESSION_NOT_FOUND");
    expect(await codeOf(store.messages.load("a\u0000b"))).toBe("HEARTH_SESSION_NOT_FOUND");
    // JSON content keeps NUL (stored escaped).
    const json = await store.messages.append(s.id, { role: "tool", content: { text: "a\u0000b" } });
    expect((await store.messages.load(s.id))[0]?.content).toEqual({ text: "a\u0000b" });
    expect(json.ordinal).toBe(0);
  });

  it("searches any text literally: the server never fails to parse the query", async () => {
    const url = await freshPgDatabase();
    const store = await open({ home: tempHome(), url, env: {} });
    const s = await store.sessions.create();
    await store.messages.append(s.id, {
      role: "user",
      content: "foo AND bar: (baz) & !qux <-> ' \\ é",
    });
    const anyString = fc.oneof(
      fc.string({ unit: "binary", maxLength: 40 }),
      fc.string({ unit: "grapheme", maxLength: 40 }),
      fc.string({
        unit: fc.constantFrom(..."\"'*^:()+-&|!<>\\{}[],. AND OR NOT foo _é\u0301".split("")),
        maxLength: 40,
      }),
    );
    await fc.assert(
      fc.asyncProperty(anyString, async (input) => {
        await store.search(input);
      }),
      { numRuns: 300 },
    );
    expect((await store.search("foo & !qux")).map((h) => h.snippet)).toHaveLength(1);
    expect(await store.search("foo OR nothing")).toHaveLength(0);
    expect(toTsQuery('say "foo and bar" x')).toBe("'say' & ('foo' <-> 'and' <-> 'bar') & 'x'");
  });
});
