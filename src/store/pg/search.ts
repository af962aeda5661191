/**
 * Full-text search on PostgreSQL: the messages' generated tsvector
 * ('simple' configuration, GIN index) matched by a tsquery built from the
 * user's text under the same literal rule as SQLite (../fts-query.ts):
 * only runs of letters, digits, marks and underscores are kept, each is a
 * quoted lexeme, balanced double quotes make a phrase (<->), and the terms
 * are ANDed. No input can make the query fail to parse: no operator ever
 * comes from the user. Ranked by ts_rank; across the whole store among the
 * newest RANK_WINDOW matches, as on SQLite.
 */
import { RANK_WINDOW, searchLimit } from "../sqlite/search.js";
import type { MessageRole, SearchHit, SearchOptions } from "../types.js";
import type { PgDb } from "./pool.js";
import { num } from "./rows.js";

/** The tsquery text for `input` (to_tsquery syntax, every lexeme quoted), or null when nothing is left. */
export function toTsQuery(input: string): string | null {
  const parts: string[] = [];
  const quoteCount = (input.match(/"/g) ?? []).length;
  const segments =
    quoteCount >= 2 && quoteCount % 2 === 0 ? input.split('"') : [input.replaceAll('"', " ")];
  segments.forEach((segment, i) => {
    const words = segment.match(/[\p{L}\p{N}\p{M}_]+/gu) ?? [];
    if (words.length === 0) return;
    const quoted = words.map((w) => `'${w}'`);
    if (i % 2 === 1) parts.push(`(${quoted.join(" <-> ")})`);
    else parts.push(...quoted);
  });
  return parts.length > 0 ? parts.join(" & ") : null;
}

export async function searchMessages(
  db: PgDb,
  text: string,
  options: SearchOptions = {},
): Promise<SearchHit[]> {
  const limit = searchLimit(text, options);
  const query = toTsQuery(text);
  if (query === null) return [];
  const params: unknown[] = [query];
  const p = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const scope = searchScope(options, p);
  const history = options.includeHistory ? "" : "AND m.active = 1";
  const windowed = scope === "";
  const { rows } = await db.query(
    "search messages",
    `WITH q AS (SELECT to_tsquery('simple', $1) AS q),
     matches AS (
       SELECT m.id, m.session_id, m.ordinal, m.role, m.active, m.created_at, m.content, m.content_tsv
         FROM messages m, q WHERE m.content_tsv @@ q.q ${history} ${scope}
         ${windowed ? `ORDER BY m.id DESC LIMIT ${RANK_WINDOW}` : ""}
     ),
     ranked AS (
       SELECT matches.*, ts_rank(matches.content_tsv, q.q) AS rank FROM matches, q
        ORDER BY rank DESC, matches.id DESC LIMIT ${p(limit)}
     )
     SELECT r.id, r.session_id, r.ordinal, r.role, r.active, r.created_at,
            ts_headline('simple', r.content, q.q,
              'StartSel=[, StopSel=], MaxWords=12, MinWords=4, MaxFragments=1, FragmentDelimiter=…') AS snippet,
            s.title, s.source, s.chat_key, s.last_activity_at
       FROM ranked r CROSS JOIN q LEFT JOIN sessions s ON s.id = r.session_id
      ORDER BY r.rank DESC, r.id DESC`,
    params,
  );
  return rows.map((r) => ({
    sessionId: r.session_id,
    messageId: num(r.id),
    ordinal: r.ordinal,
    role: r.role as MessageRole,
    active: r.active === 1,
    snippet: r.snippet,
    createdAt: num(r.created_at),
    session:
      r.source === null || r.source === undefined
        ? null
        : {
            title: r.title,
            source: r.source,
            chatKey: r.chat_key,
            lastActivityAt: num(r.last_activity_at),
          },
  }));
}

/** The WHERE terms that narrow by session or time (validated as on SQLite). */
function searchScope(options: SearchOptions, p: (value: unknown) => string): string {
  const terms: string[] = [];
  if (options.sessionId !== undefined) terms.push(`AND m.session_id = ${p(options.sessionId)}`);
  const session: string[] = [];
  for (const [key, column] of [
    ["source", "source"],
    ["chatKey", "chat_key"],
    ["ownerId", "owner_id"],
  ] as const) {
    const value = options[key];
    if (value === undefined) continue;
    if (typeof value !== "string") throw new TypeError(`options.${key} must be a string`);
    session.push(`${column} = ${p(value)}`);
  }
  if (session.length > 0) {
    terms.push(`AND m.session_id IN (SELECT id FROM sessions WHERE ${session.join(" AND ")})`);
  }
  for (const [key, op] of [
    ["since", ">="],
    ["until", "<"],
  ] as const) {
    const value = options[key];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new RangeError(`options.${key} must be epoch milliseconds, got ${String(value)}`);
    }
    terms.push(`AND m.created_at ${op} ${p(value)}`);
  }
  return terms.join(" ");
}
