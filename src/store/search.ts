/**
 * Full-text search, the part every backend shares: the checks of a search's
 * text and options, what a person typed turned into search terms (any text
 * is searched literally: no operator ever comes from the user), the scope
 * filters and the ranking window. Each backend renders the terms in its own
 * query syntax and runs the query (sqlite/search.ts: FTS5 MATCH;
 * pg/search.ts: a tsquery).
 */
import type { SearchHit, SearchOptions } from "./types.js";

/** How many of the newest matches a store-wide search ranks by relevance. */
export const RANK_WINDOW = 5000;

/** The most hits one search returns. */
const MAX_SEARCH_LIMIT = 500;

/** One term of a search: a word, or a phrase (its words in that order, from balanced double quotes). */
export interface SearchTerm {
  words: string[];
  phrase: boolean;
}

/** The filters of a search that narrow by session or time, checked. */
export interface SearchScope {
  sessionId?: string;
  /** Columns of the sessions table and the values they must have (source, chat_key, owner_id). */
  sessions: { column: string; value: string }[];
  since?: number;
  until?: number;
}

/** A search as a backend runs it: plain data (a reader thread can carry it). */
export interface SearchQuery {
  /** At least one term. */
  terms: SearchTerm[];
  limit: number;
  includeHistory: boolean;
  scope: SearchScope;
  /** What wraps each match in the snippet. */
  marks: [string, string];
}

/** What a backend does for a search: the best `limit` hits of the terms in the scope, best first. */
export interface SearchSql {
  hits(query: SearchQuery): Promise<SearchHit[]>;
}

/** Full-text search over message content; any user text is searched literally. */
export async function searchMessages(
  sql: SearchSql,
  text: string,
  options: SearchOptions = {},
): Promise<SearchHit[]> {
  const limit = searchLimit(text, options);
  const terms = searchTerms(text);
  if (terms.length === 0) return [];
  return sql.hits({
    terms,
    limit,
    includeHistory: Boolean(options.includeHistory),
    scope: searchScope(options),
    marks: searchMarks(options.marks),
  });
}

/**
 * What a person typed, as search terms: only runs of letters, digits,
 * marks and underscores are kept, each a word; balanced double quotes keep
 * a phrase together (unbalanced ones are dropped). Empty when nothing is
 * left to search for.
 */
export function searchTerms(input: string): SearchTerm[] {
  const terms: SearchTerm[] = [];
  const quoteCount = (input.match(/"/g) ?? []).length;
  const segments =
    quoteCount >= 2 && quoteCount % 2 === 0 ? input.split('"') : [input.replaceAll('"', " ")];
  segments.forEach((segment, i) => {
    const words = segment.match(/[\p{L}\p{N}\p{M}_]+/gu) ?? [];
    if (words.length === 0) return;
    if (i % 2 === 1) terms.push({ words, phrase: true });
    else for (const word of words) terms.push({ words: [word], phrase: false });
  });
  return terms;
}

function searchMarks(marks: SearchOptions["marks"]): [string, string] {
  if (marks === undefined) return ["[", "]"];
  const ok = (m: unknown) => typeof m === "string" && m.length >= 1 && m.length <= 8;
  if (!Array.isArray(marks) || marks.length !== 2 || !ok(marks[0]) || !ok(marks[1]))
    throw new RangeError("options.marks must be two strings of 1 to 8 characters");
  return [marks[0], marks[1]];
}

/** Check a search's text and limit; returns the limit. */
function searchLimit(text: unknown, options: SearchOptions): number {
  if (typeof text !== "string") throw new TypeError("search text must be a string");
  const limit = options.limit ?? 20;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) {
    throw new RangeError(
      `options.limit must be an integer from 1 to ${MAX_SEARCH_LIMIT}, got ${limit}`,
    );
  }
  return limit;
}

/** The search options that narrow by session or time, checked. */
function searchScope(options: SearchOptions): SearchScope {
  const scope: SearchScope = { sessions: [] };
  if (options.sessionId !== undefined) scope.sessionId = options.sessionId;
  for (const [key, column] of [
    ["source", "source"],
    ["chatKey", "chat_key"],
    ["ownerId", "owner_id"],
  ] as const) {
    const value = options[key];
    if (value === undefined) continue;
    if (typeof value !== "string") throw new TypeError(`options.${key} must be a string`);
    scope.sessions.push({ column, value });
  }
  for (const key of ["since", "until"] as const) {
    const value = options[key];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new RangeError(`options.${key} must be epoch milliseconds, got ${String(value)}`);
    }
    scope[key] = value;
  }
  return scope;
}

/** True when the scope narrows nothing: the search is store-wide (and ranks a window). */
export function storeWide(scope: SearchScope): boolean {
  return (
    scope.sessionId === undefined &&
    scope.sessions.length === 0 &&
    scope.since === undefined &&
    scope.until === undefined
  );
}

/**
 * The scope as `AND ...` terms on messages `m`, the same statement on
 * every engine; `param` adds a value and returns its placeholder. The
 * sessions in scope are found through their indexes (owner, chat), then
 * the messages by session.
 */
export function searchScopeSql(scope: SearchScope, param: (value: unknown) => string): string {
  const terms: string[] = [];
  if (scope.sessionId !== undefined) terms.push(`AND m.session_id = ${param(scope.sessionId)}`);
  if (scope.sessions.length > 0) {
    const session = scope.sessions.map((s) => `${s.column} = ${param(s.value)}`);
    terms.push(`AND m.session_id IN (SELECT id FROM sessions WHERE ${session.join(" AND ")})`);
  }
  if (scope.since !== undefined) terms.push(`AND m.created_at >= ${param(scope.since)}`);
  if (scope.until !== undefined) terms.push(`AND m.created_at < ${param(scope.until)}`);
  return terms.join(" ");
}
