import { fromSqliteError, HearthError } from "../../errors.js";
import type { MessageRole, SearchHit, SearchOptions } from "../types.js";
import type { Access } from "./access.js";
import { searchDegradedReason } from "./fts-merge.js";
import { toFtsQuery } from "./fts-query.js";

interface HitRow {
  session_id: string;
  id: number;
  ordinal: number;
  role: string;
  active: number;
  created_at: number;
  snippet: string;
}

/** How many of the newest matches a store-wide search ranks by relevance. */
export const RANK_WINDOW = 5000;

/** Full-text search over message content; any user text is searched literally. */
export async function searchMessages(
  access: Access,
  text: string,
  options: SearchOptions = {},
): Promise<SearchHit[]> {
  const limit = searchLimit(text, options);
  const query = toFtsQuery(text);
  if (query === null) return [];
  const scope = searchScope(options);
  const filters = [options.includeHistory ? "" : "AND m.active = 1", scope.sql].join(" ");
  // Across the whole store, relevance is ranked among the newest RANK_WINDOW
  // matches: ranking every match of a common word in a million messages
  // takes ~100 ms, the newest few thousand a few ms (docs/api.md).
  // A filtered search ranks every match in its scope: a window of the store's
  // newest matches could hold none of the scope's (an owner's, an older range's).
  const windowed = scope.sql === "";
  const window = windowed
    ? `AND messages_fts.rowid >= coalesce((SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?
         ORDER BY rowid DESC LIMIT 1 OFFSET ${RANK_WINDOW - 1}), 0)`
    : "";
  const params: unknown[] = windowed ? [query, query] : [query];
  params.push(...scope.params);
  const conn = access.read();
  const degraded = searchDegradedReason((sql) => conn.stmt(sql));
  if (degraded !== null) throw searchDegraded(access.path, degraded);
  let rows: HitRow[];
  try {
    rows = conn
      .stmt(
        `SELECT m.session_id, m.id, m.ordinal, m.role, m.active, m.created_at,
              snippet(messages_fts, 0, '[', ']', '…', 12) AS snippet
       FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid
       WHERE messages_fts MATCH ? ${window} ${filters}
       ORDER BY rank LIMIT +?`,
      )
      .all(...params, limit) as HitRow[];
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

/** The WHERE terms of the search options that narrow by session or time (validated). */
function searchScope(options: SearchOptions): { sql: string; params: unknown[] } {
  const terms: string[] = [];
  const params: unknown[] = [];
  if (options.sessionId !== undefined) {
    terms.push("AND m.session_id = ?");
    params.push(options.sessionId);
  }
  const session: string[] = [];
  for (const [key, column] of [
    ["source", "source"],
    ["chatKey", "chat_key"],
    ["ownerId", "owner_id"],
  ] as const) {
    const value = options[key];
    if (value === undefined) continue;
    if (typeof value !== "string") throw new TypeError(`options.${key} must be a string`);
    session.push(`${column} = ?`);
    params.push(value);
  }
  // The sessions in scope through their indexes (owner, chat), then the messages by session.
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
    terms.push(`AND m.created_at ${op} ?`);
    params.push(value);
  }
  return { sql: terms.join(" "), params };
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

/** Check a search's text and limit (both backends); returns the limit. */
export function searchLimit(text: unknown, options: SearchOptions): number {
  if (typeof text !== "string") throw new TypeError("search text must be a string");
  const limit = options.limit ?? 20;
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) {
    throw new RangeError(`options.limit must be an integer from 1 to 500, got ${limit}`);
  }
  return limit;
}
