import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isHearthError, loadConfig, openStore } from "../../../src/index.js";
import { tempHome } from "../../helpers/home.js";

// Abuse half of issue 14, in-process: fuzzed config files, profile names
// and corrupted stores. Whatever fast-check draws is either accepted or
// refused with a HearthError carrying a stable code; nothing else escapes
// (no TypeError from deep inside, no raw SQLite error), and a refusal
// creates nothing.
const codeOf = (err: unknown) => (isHearthError(err) ? err.code : `not a HearthError: ${err}`);

describe("fuzzed config.json", () => {
  it("is loaded or refused with HEARTH_CONFIG_INVALID / HEARTH_CONFIG_UNREADABLE, never anything else", () => {
    const home = tempHome();
    mkdirSync(home, { recursive: true, mode: 0o700 });
    const keys = fc.constantFrom(
      "store",
      "gateway",
      "backup",
      "maintenance",
      "dashboard",
      "scheduler",
      "sessions",
      "busyTimeoutMs",
      "keep",
      "port",
      "synchronous",
      "journalMode",
      "__proto__",
      "constructor",
    );
    const value = fc.letrec((tie) => ({
      v: fc.oneof(
        { depthSize: "small" },
        fc.jsonValue({ maxDepth: 1 }),
        fc.dictionary(fc.oneof(keys, fc.string({ maxLength: 8 })), tie("v"), { maxKeys: 4 }),
      ),
    })).v;
    const text = fc.oneof(
      value.map((v) => JSON.stringify(v)),
      fc.string({ maxLength: 80 }),
      fc.string({ unit: "binary", maxLength: 80 }),
      fc.constantFrom("", "{", "null", "[]", '{"store":', "\uFEFF{}", '{"a":1}garbage'),
    );
    fc.assert(
      fc.property(text, (body) => {
        writeFileSync(join(home, "config.json"), body, { mode: 0o600 });
        try {
          loadConfig({ home, env: {} });
        } catch (err) {
          expect(["HEARTH_CONFIG_INVALID", "HEARTH_CONFIG_UNREADABLE"]).toContain(codeOf(err));
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("fuzzed profile names", () => {
  it("open a store of exactly that name inside the home, or are refused with HEARTH_PROFILE_INVALID creating nothing", async () => {
    const home = tempHome();
    await (await openStore({ home })).close();
    const name = fc.oneof(
      fc.string({ maxLength: 70 }),
      fc.string({ unit: "binary", maxLength: 20 }),
      fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,63}$/),
      fc.constantFrom("..", ".", "../x", "a/b", "a\0b", "default/..", "CON", "-x", "x".repeat(65)),
    );
    await fc.assert(
      fc.asyncProperty(name, async (profile) => {
        const before = readdirSync(home).sort();
        expect(before).not.toContain("profiles");
        try {
          const store = await openStore({ home, profile, role: "reader" });
          await store.close();
          // A reader never creates; here it found an existing store of that name
          // ("" is nobody's choice: the default profile, documented in config/paths.ts).
          expect(profile === "" || /^[a-z0-9][a-z0-9_-]{0,63}$/.test(profile)).toBe(true);
        } catch (err) {
          const code = codeOf(err);
          if (/^[a-z0-9][a-z0-9_-]{0,63}$/.test(profile)) {
            expect(["HEARTH_STORE_NOT_FOUND"]).toContain(code);
          } else {
            expect(code).toBe("HEARTH_PROFILE_INVALID");
          }
          // A refusal creates nothing (no directory of that name, anywhere).
          expect(readdirSync(home).sort()).toEqual(before);
        }
      }),
      { numRuns: 300 },
    );
  });
});

/** A closed store with 40 sessions of searchable messages; returns its path. */
async function seeded(home: string): Promise<string> {
  const store = await openStore({ home });
  for (let i = 0; i < 40; i++) {
    const s = await store.sessions.create({ title: `s${i}` });
    for (let j = 0; j < 5; j++)
      await store.messages.append(s.id, { role: "user", content: `word${j} ${"y".repeat(300)}` });
  }
  await store.close();
  return store.path;
}

type Damage = "page" | "schema-row" | "fts-shadow";

function damage(path: string, kind: Damage, page: number, offset: number, bytes: Buffer): void {
  if (kind === "page") {
    const fd = openSync(path, "r+");
    writeSync(fd, bytes, 0, bytes.length, page * 4096 + offset);
    closeSync(fd);
    return;
  }
  const db = new Database(path);
  db.unsafeMode(true);
  if (kind === "schema-row") {
    db.pragma("writable_schema = ON");
    db.prepare("UPDATE sqlite_schema SET sql = ? WHERE name = 'messages'").run(
      bytes.toString("latin1"),
    );
  } else {
    db.exec(`UPDATE messages_fts_data SET block = randomblob(${bytes.length}) WHERE id > ${page}`);
  }
  db.close();
}

describe("corrupted stores (pages, schema row, FTS shadow tables)", () => {
  it("every call answers or throws a coded HearthError, never a raw error", async () => {
    const pristine = tempHome();
    const source = await seeded(pristine);
    const bytes = readFileSync(source);
    const pages = Math.floor(bytes.length / 4096);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<Damage>("page", "page", "schema-row", "fts-shadow"),
        fc.integer({ min: 1, max: pages - 1 }),
        fc.integer({ min: 0, max: 4000 }),
        fc.uint8Array({ minLength: 1, maxLength: 96 }).map((a) => Buffer.from(a)),
        async (kind, page, offset, junk) => {
          const home = tempHome();
          mkdirSync(home, { recursive: true, mode: 0o700 });
          const path = join(home, "state.db");
          writeFileSync(path, bytes, { mode: 0o600 });
          damage(path, kind, page, offset, junk);
          const codes: string[] = [];
          const attempt = async (what: string, fn: () => Promise<unknown>) => {
            try {
              await fn();
            } catch (err) {
              const code = codeOf(err);
              codes.push(`${what}: ${code}`);
              expect(code, `${kind} p${page}+${offset}: ${what}: ${String(err)}`).toMatch(
                /^HEARTH_[A-Z_]+$/,
              );
            }
          };
          let store: Awaited<ReturnType<typeof openStore>> | undefined;
          await attempt("open", async () => {
            store = await openStore({ home });
          });
          if (!store) return;
          const s = store;
          await attempt("list", () => s.sessions.list());
          await attempt("search", () => s.search("word1"));
          await attempt("counts", () => s.counts());
          await attempt("quickCheck", () => s.quickCheck());
          await attempt("append", async () => {
            const created = await s.sessions.create({ title: "new" });
            await s.messages.append(created.id, { role: "user", content: "after damage" });
          });
          await attempt("close", () => s.close());
          expect(existsSync(path)).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  }, 120_000);
});
