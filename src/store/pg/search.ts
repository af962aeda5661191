/**
 * Full-text search on PostgreSQL: the messages' generated tsvector
 * ('simple' configuration, GIN index) matched by a tsquery built from the
 * search terms of ../search.ts (the same literal rule as SQLite): each
 * word is a quoted lexeme, a phrase is its lexemes joined by <->, and the
 * terms are ANDed. No input can make the query fail to parse: no operator
 * ever comes from the user. Ranked by ts_rank; across the whole store
 * among the newest RANK_WINDOW matches, as on SQLite.
 */
import {
  RANK_WINDOW,
  type SearchQuery,
  type SearchSql,
  type SearchTerm,
  searchScopeSql,
  searchTerms,
  storeWide,
} from "../search.js";
import type { MessageRole, SearchHit } from "../types.js";
import type { PgDb } from "./pool.js";
import { num } from "./rows.js";

/** Search terms as to_tsquery text, every lexeme quoted. */
export function tsQuery(terms: readonly SearchTerm[]): string {
  return terms
    .map((term) => {
      const quoted = term.words.map((w) => `'${w}'`);
      return term.phrase ? `(${quoted.join(" <-> ")})` : quoted[0];
    })
    .join(" & ");
}

/** The tsquery text for what a person typed, or null when nothing is left. */
export function toTsQuery(input: string): string | null {
  const terms = searchTerms(input);
  return terms.length > 0 ? tsQuery(terms) : null;
}

export class PgSearch implements SearchSql {
  constructor(private readonly db: PgDb) {}

  async hits(query: SearchQuery): Promise<SearchHit[]> {
    const params: unknown[] = [tsQuery(query.terms)];
    const p = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    const scope = searchScopeSql(query.scope, p);
    const history = query.includeHistory ? "" : "AND m.active = 1";
    const windowed = storeWide(query.scope);
    const { rows } = await this.db.query(
      "search messages",
      `WITH q AS (SELECT to_tsquery('simple', $1) AS q),
       matches AS (
         SELECT m.id, m.session_id, m.ordinal, m.role, m.active, m.created_at, m.content, m.content_tsv
           FROM messages m, q WHERE m.content_tsv @@ q.q ${history} ${scope}
           ${windowed ? `ORDER BY m.id DESC LIMIT ${RANK_WINDOW}` : ""}
       ),
       ranked AS (
         SELECT matches.*, ts_rank(matches.content_tsv, q.q) AS rank FROM matches, q
          ORDER BY rank DESC, matches.id DESC LIMIT ${p(query.limit)}
       )
       SELECT r.id, r.session_id, r.ordinal, r.role, r.active, r.created_at,
              ts_headline('simple', r.content, q.q,
                ${p(headlineOptions(query.marks))}) AS snippet,
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
}

/** ts_headline's options with these marks (each double-quoted: a mark may hold a comma or `=`). */
function headlineOptions([open, close]: [string, string]): string {
  const quote = (s: string) => `"${s.replaceAll('"', '""')}"`;
  return `StartSel=${quote(open)}, StopSel=${quote(close)}, MaxWords=12, MinWords=4, MaxFragments=1, FragmentDelimiter=…`;
}
