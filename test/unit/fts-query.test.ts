import Database from "better-sqlite3";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toFtsQuery } from "../../src/store/sqlite/fts-query.js";

const ROWS = [
  "the quick brown fox",
  "fox brown quick the",
  "cats and dogs",
  "cats dogs",
  "cats not dogs",
  "content foo",
  "foo bar",
  "near a b",
  "fox hunting",
  "say hello",
  "café olé",
  "東京 タワー",
];

let db: Database.Database;
let search: Database.Statement<[string], { rowid: number }>;

beforeAll(() => {
  db = new Database(":memory:");
  db.exec("CREATE VIRTUAL TABLE t USING fts5(content, tokenize='unicode61 remove_diacritics 2')");
  const insert = db.prepare("INSERT INTO t (rowid, content) VALUES (?, ?)");
  for (const [i, row] of ROWS.entries()) insert.run(i + 1, row);
  search = db.prepare("SELECT rowid FROM t WHERE t MATCH ? ORDER BY rowid");
});

afterAll(() => db.close());

/** The rows a user's input finds, by content; null when there was nothing to search. */
function find(input: string): string[] | null {
  const query = toFtsQuery(input);
  if (query === null) return null;
  return search.all(query).map((r) => ROWS[r.rowid - 1]!);
}

/** What the same text finds when handed to FTS5 unescaped. */
function findRaw(query: string): string[] {
  return search.all(query).map((r) => ROWS[r.rowid - 1]!);
}

describe("toFtsQuery", () => {
  it("never makes MATCH throw, for any input", () => {
    const anyString = fc.oneof(
      fc.string({ unit: "binary", maxLength: 40 }),
      fc.string({ unit: "grapheme", maxLength: 40 }),
      fc.string({
        unit: fc.constantFrom(...'"*^:()+-{}[],. AND OR NOT NEAR content foo _é\u0301\0'.split("")),
        maxLength: 40,
      }),
    );
    fc.assert(
      fc.property(anyString, (input) => {
        const query = toFtsQuery(input);
        if (query === null) return;
        expect(() => search.all(query)).not.toThrow();
      }),
      { numRuns: 2000 },
    );
  });

  it("finds the row holding the very words it was given", () => {
    const word = fc.stringMatching(/^[a-zA-Z0-9éüß]{1,8}$/);
    const noise = fc.constantFrom(
      " ",
      "  ",
      ", ",
      " AND ",
      " OR ",
      " NOT ",
      "*",
      "^",
      "(",
      ")",
      ":",
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(word, noise), { minLength: 1, maxLength: 6 }), (pairs) => {
        const text = pairs.map(([w, n]) => w + n).join("");
        const local = new Database(":memory:");
        try {
          local.exec(
            "CREATE VIRTUAL TABLE t USING fts5(content, tokenize='unicode61 remove_diacritics 2')",
          );
          local.prepare("INSERT INTO t (content) VALUES (?)").run(text);
          const query = toFtsQuery(text);
          expect(query).not.toBeNull();
          const hits = local.prepare("SELECT content FROM t WHERE t MATCH ?").all(query!);
          expect(hits).toEqual([{ content: text }]);
        } finally {
          local.close();
        }
      }),
      { numRuns: 300 },
    );
  });

  it("returns null when nothing searchable is left", () => {
    expect(toFtsQuery("")).toBeNull();
    expect(toFtsQuery("   ")).toBeNull();
    expect(toFtsQuery('"" * ^ ( ) : -')).toBeNull();
    expect(toFtsQuery('"')).toBeNull();
  });

  it("quotes every word", () => {
    expect(toFtsQuery("cats AND dogs")).toBe('"cats" "AND" "dogs"');
    expect(toFtsQuery("NEAR(a b)")).toBe('"NEAR" "a" "b"');
    expect(toFtsQuery("content:foo")).toBe('"content" "foo"');
    expect(toFtsQuery("^fox*")).toBe('"fox"');
  });

  it("searches AND, OR and NOT as plain words", () => {
    expect(find("cats AND dogs")).toEqual(["cats and dogs"]);
    expect(findRaw("cats AND dogs")).toEqual(["cats and dogs", "cats dogs", "cats not dogs"]);

    expect(find("cats NOT dogs")).toEqual(["cats not dogs"]);
    expect(findRaw("cats NOT dogs")).toEqual([]);

    expect(find("foo OR hunting")).toEqual([]);
    expect(findRaw("foo OR hunting")).toEqual(["content foo", "foo bar", "fox hunting"]);
  });

  it("searches NEAR and parentheses as plain words", () => {
    expect(find("NEAR(a b)")).toEqual(["near a b"]);
    expect(find("(cats OR foo)")).toEqual([]);
    expect(find("(cats dogs)")).toEqual(["cats and dogs", "cats dogs", "cats not dogs"]);
  });

  it("does not treat `col:` as a column filter", () => {
    expect(find("content:foo")).toEqual(["content foo"]);
    expect(findRaw("content:foo")).toEqual(["content foo", "foo bar"]);
  });

  it("ignores ^ (initial token) and * (prefix)", () => {
    expect(findRaw("^fox")).toEqual(["fox brown quick the", "fox hunting"]);
    expect(find("^fox")).toEqual(["the quick brown fox", "fox brown quick the", "fox hunting"]);

    expect(findRaw("fo*")).toEqual([
      "the quick brown fox",
      "fox brown quick the",
      "content foo",
      "foo bar",
      "fox hunting",
    ]);
    expect(find("fo*")).toEqual([]);
  });

  it("searches the words of an unbalanced quote without throwing", () => {
    expect(() => findRaw('say "hello')).toThrow(/syntax error|unterminated/i);
    expect(toFtsQuery('say "hello')).toBe('"say" "hello"');
    expect(find('say "hello')).toEqual(["say hello"]);
    expect(find('"say" "hello')).toEqual(["say hello"]);
  });

  it("treats an odd number of quotes as no phrase at all", () => {
    expect(toFtsQuery('"fox brown" "the')).toBe('"fox" "brown" "the"');
    expect(find('"fox brown" "the')).toEqual(["the quick brown fox", "fox brown quick the"]);
  });

  it("keeps a balanced quoted phrase together and in order", () => {
    expect(toFtsQuery('"brown fox" quick')).toBe('"brown fox" "quick"');
    expect(find('"brown fox"')).toEqual(["the quick brown fox"]);
    expect(find('"fox brown"')).toEqual(["fox brown quick the"]);
    expect(find("brown fox")).toEqual(["the quick brown fox", "fox brown quick the"]);
    expect(find('"quick fox"')).toEqual([]);
  });

  it("matches accented and non-Latin words", () => {
    expect(find("cafe")).toEqual(["café olé"]);
    expect(find("OLÉ")).toEqual(["café olé"]);
    expect(find("東京")).toEqual(["東京 タワー"]);
  });
});
