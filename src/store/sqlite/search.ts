import { HearthError } from "../../errors.js";
import { fromSqliteError } from "../../sqlite-errors.js";
import { RANK_WINDOW, type SearchQuery, searchScopeSql, storeWide } from "../search.js";
import type { MessageRole, SearchHit } from "../types.js";
import type { Access } from "./access.js";
import { searchDegradedReason } from "./fts-merge.js";
import { ftsMatch } from "./fts-query.js";

interface HitRow {
  session_id: string;
  id: number;
  ordinal: number;
  role: string;
  active: number;
  created_at: number;
  snippet: string;
}

/**
 * A search on SQLite (../search.ts checked it): FTS5 MATCH on messages_fts,
 * ranked by bm25. Runs on the caller's thread or a reader thread.
 */
export function searchHits(access: Access, query: SearchQuery): SearchHit[] {
  const match = ftsMatch(query.terms);
  // Across the whole store, relevance is ranked among the newest RANK_WINDOW
  // matches: ranking every match of a common word in a million messages
  // takes ~100 ms, the newest few thousand a few ms (docs/api.md).
  // A filtered search ranks every match in its scope: a window of the store's
  // newest matches could hold none of the scope's (an owner's, an older range's).
  const windowed = storeWide(query.scope);
  const window = windowed
    ? `AND messages_fts.rowid >= coalesce((SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?
         ORDER BY rowid DESC LIMIT 1 OFFSET ${RANK_WINDOW - 1}), 0)`
    : "";
  // The snippet's marks come first: their placeholders precede MATCH's in the statement.
  const params: unknown[] = [...query.marks, match, ...(windowed ? [match] : [])];
  const scope = searchScopeSql(query.scope, (value) => {
    params.push(value);
    return "?";
  });
  const filters = [query.includeHistory ? "" : "AND m.active = 1", scope].join(" ");
  const conn = access.read();
  const degraded = searchDegradedReason((sql) => conn.stmt(sql));
  if (degraded !== null) throw searchDegraded(access.path, degraded);
  let rows: HitRow[];
  try {
    rows = conn
      .stmt(
        `SELECT m.session_id, m.id, m.ordinal, m.role, m.active, m.created_at,
              snippet(messages_fts, 0, +?, +?, '…', 12) AS snippet
       FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid
       WHERE messages_fts MATCH ? ${window} ${filters}
       ORDER BY rank LIMIT +?`,
      )
      .all(...params, query.limit) as HitRow[];
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "SQLITE_CORRUPT_VTAB" || code === "SQLITE_CORRUPT")
      throw searchDegraded(access.path, String((err as Error).message));
    throw fromSqliteError(err, access.path);
  }
  // The hits' sessions in one keyed lookup (at most `limit` ids), not a join over every match.
  const ids = [...new Set(rows.map((r) => r.session_id))];
  const sessions = new Map<string, SearchHit["session"]>();
  if (ids.length > 0) {
    const found = conn
      .stmt(
        `SELECT id, title, source, chat_key, last_activity_at FROM sessions
         WHERE id IN (SELECT value FROM json_each(?))`,
      )
      .all(JSON.stringify(ids)) as {
      id: string;
      title: string | null;
      source: string;
      chat_key: string | null;
      last_activity_at: number;
    }[];
    for (const s of found) {
      sessions.set(s.id, {
        title: s.title,
        source: s.source,
        chatKey: s.chat_key,
        lastActivityAt: s.last_activity_at,
      });
    }
  }
  return rows.map((r) => ({
    sessionId: r.session_id,
    messageId: r.id,
    ordinal: r.ordinal,
    role: r.role as MessageRole,
    active: r.active === 1,
    snippet: r.snippet,
    createdAt: r.created_at,
    session: sessions.get(r.session_id) ?? null,
  }));
}

function searchDegraded(path: string, reason: string): HearthError {
  return new HearthError(
    "HEARTH_SEARCH_DEGRADED",
    `search is unavailable: the search index of ${path} is damaged (${reason}); messages are still stored and readable`,
    {
      resource: path,
      hint: "hearth sessions repair   # rebuilds the index from the messages (offline)",
    },
  );
}
