/**
 * Messages on SQLite: the SQL behind ../messages.ts (which validates and
 * prepares every input first). Every write is one synchronous transaction
 * callback on the writer; every read one statement (or one read
 * transaction) on the reader connection. The reader threads run the same
 * reads (readWindow, readWindowJson) on connections of their own.
 */
import { HearthError } from "../../errors.js";
import { fromSqliteError, isSqliteError } from "../../sqlite-errors.js";
import type { LoadWindow, PreparedMessage } from "../message-input.js";
import { requireOwnEntry } from "../message-write.js";
import type { AppendResult, MessagesSql, ReadyItem } from "../messages.js";
import { MESSAGE_COLUMNS, messageFromRaw } from "../rows.js";
import { sessionNotFound } from "../session-create.js";
import {
  asyncParts,
  type JsonParts,
  jsonTextParts,
  LOOP_PART_CHARS,
  MESSAGE_JSON,
  type MessageTexts,
} from "../transcript-json.js";
import type { Message, Session } from "../types.js";
import type { Access } from "./access.js";
import type { Connection } from "./connection.js";
import { SqliteEdits } from "./edits.js";
import { archiveSuffix, insertMessage, requireSession } from "./message-write.js";
import { casOn } from "./meta.js";
import { requireOpenChat } from "./open-chat.js";

/** The edits (pop, archiveAfter, replaceSuffix) are SqliteEdits's. */
export class SqliteMessages extends SqliteEdits implements MessagesSql {
  append(sessionId: string, m: PreparedMessage, signal?: AbortSignal): Promise<Message> {
    return this.access.writeTransaction((conn) => insertMessage(conn, sessionId, m), signal);
  }

  appendBatch(
    sessionId: string,
    messages: readonly PreparedMessage[],
    signal?: AbortSignal,
  ): Promise<Message[]> {
    return this.access.writeTransaction(
      (conn) => messages.map((m) => insertMessage(conn, sessionId, m)),
      signal,
    );
  }

  /** One transaction, each item on its own savepoint. */
  async appendMany(items: readonly ReadyItem[], now: number): Promise<AppendResult[]> {
    const results = new Array<AppendResult>(items.length);
    await this.access.writeTransaction(
      (conn) => {
        items.forEach((item, i) => {
          conn.stmt("SAVEPOINT hearth_item").run();
          try {
            if (item.openChat) requireOpenChat(conn, item.openChat, item.sessionId);
            if (item.metaBefore) casOn(conn, item.metaBefore.key, item.metaBefore.decide, now);
            const report: { session?: Session } | undefined = item.withSession ? {} : undefined;
            const message = insertMessage(conn, item.sessionId, item.message, report);
            if (item.metaAfter) casOn(conn, item.metaAfter.key, item.metaAfter.decide, now);
            conn.stmt("RELEASE hearth_item").run();
            results[i] = report?.session
              ? { ok: true, message, session: report.session }
              : { ok: true, message };
          } catch (err) {
            conn.stmt("ROLLBACK TO hearth_item").run();
            conn.stmt("RELEASE hearth_item").run();
            // Coded as a single append's error would be (the store's wrapper never sees these).
            const error = isSqliteError(err) ? fromSqliteError(err, this.access.path) : err;
            results[i] = { ok: false, error: error as Error };
          }
        });
      },
      undefined,
      { grouped: items.length },
    );
    return results;
  }

  save(
    sessionId: string,
    known: readonly number[],
    fresh: readonly PreparedMessage[],
  ): Promise<Message[]> {
    return this.access.writeTransaction((conn) => {
      const owner = conn.stmt("SELECT session_id FROM messages WHERE id = ?");
      for (const id of known) {
        const row = owner.get(id) as { session_id: string } | undefined;
        requireOwnEntry(id, row?.session_id, sessionId);
      }
      return fresh.map((m) => insertMessage(conn, sessionId, m));
    });
  }

  async load(sessionId: string, window: LoadWindow): Promise<Message[]> {
    const rows = readWindow(this.access, sessionId, window);
    const messages = new Array<Message>(rows.length);
    for (let i = 0; i < rows.length; i++) messages[i] = messageFromRaw(sessionId, rows[i]!);
    return messages;
  }

  async loadJson(sessionId: string, window: LoadWindow): Promise<Uint8Array> {
    const texts = readWindowJson(this.access, sessionId, window);
    const [whole] = jsonTextParts(sessionId, texts, Number.POSITIVE_INFINITY);
    return new TextEncoder().encode(whole);
  }

  async loadJsonParts(sessionId: string, window: LoadWindow): Promise<JsonParts> {
    return asyncParts(
      jsonTextParts(sessionId, readWindowJson(this.access, sessionId, window), LOOP_PART_CHARS),
    );
  }

  compact(
    sessionId: string,
    summary: PreparedMessage,
  ): Promise<{ summary: Message; archived: number }> {
    return this.access.writeTransaction((conn) => {
      requireSession(conn, sessionId);
      const archived = archiveSuffix(conn, sessionId, -1, "compaction", this.access.now());
      return { summary: insertMessage(conn, sessionId, summary), archived };
    });
  }

  async counts(): Promise<{ sessions: number; messages: number; active: number }> {
    return this.access
      .read()
      .stmt(
        `SELECT (SELECT count(*) FROM sessions) AS sessions,
                (SELECT count(*) FROM messages) AS messages,
                (SELECT count(*) FROM messages WHERE active = 1) AS active`,
      )
      .get() as { sessions: number; messages: number; active: number };
  }
}

/** The rows of a `load()` window as raw arrays of MESSAGE_COLUMNS, in one statement. */
export function readWindow(access: Access, sessionId: string, window: LoadWindow): unknown[][] {
  return selectWindow<unknown[]>(access.read(), sessionId, window, MESSAGE_COLUMNS, [], "raw");
}

/**
 * The rows of a `load()` window as `jsonTextParts` joins them
 * (transcript-json.ts): most as their message's JSON text, built by
 * SQLite; the others (JSON content, tool calls, metadata) as columns, read
 * by id in the same read transaction (one snapshot).
 */
export function readWindowJson(
  access: Access,
  sessionId: string,
  window: LoadWindow,
): MessageTexts {
  const conn = access.read();
  return conn.db.transaction(() => {
    const rows = selectWindow<string | number>(
      conn,
      sessionId,
      window,
      MESSAGE_JSON,
      [sessionId],
      "pluck",
    );
    const ids = rows.filter((row) => typeof row === "number");
    if (ids.length === 0) return rows as string[];
    const columns = conn
      .stmt(`SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id IN (SELECT value FROM json_each(?))`)
      .raw(true)
      .all(JSON.stringify(ids)) as unknown[][];
    const byId = new Map(columns.map((row) => [row[0], row]));
    return rows.map((row) => {
      if (typeof row === "string") return row;
      const found = byId.get(row);
      // Impossible inside one read transaction; never a transcript with a hole.
      if (!found) throw new HearthError("HEARTH_INTERNAL", `internal: message ${row} vanished`);
      return found;
    });
  })();
}

/** Keyset reads on (session_id, active, ordinal): a window of N rows costs about N rows, however long the transcript is. */
function selectWindow<Row>(
  conn: Connection,
  sessionId: string,
  window: LoadWindow,
  select: string,
  selectParams: unknown[],
  mode: "raw" | "pluck",
): Row[] {
  const { where, params, order, limit } = window;
  const history = window.includeHistory ? "" : "AND active = 1";
  const statement = conn.stmt(
    `SELECT ${select} FROM messages WHERE session_id = ? ${history} ${where}
     ORDER BY ordinal ${order}${limit === undefined ? "" : " LIMIT +?"}`,
  );
  const rows = (mode === "raw" ? statement.raw(true) : statement.pluck(true)).all(
    ...selectParams,
    sessionId,
    ...params,
    ...(limit === undefined ? [] : [limit]),
  ) as Row[];
  if (rows.length === 0 && !conn.stmt("SELECT 1 FROM sessions WHERE id = ?").get(sessionId)) {
    throw sessionNotFound(sessionId);
  }
  return rows;
}
