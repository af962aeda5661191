/**
 * One step of an export on PostgreSQL (mirrors exportStep in ../export.ts:
 * the same cursor, the same chunk format, sessions in bytewise id order).
 */

import { toMessage, toSession } from "../rows.js";
import {
  EXPORT_PAGE,
  type ExportCursor,
  type ExportOptions,
  type ExportStep,
  markdownHeader,
  markdownMessage,
} from "../sqlite/export.js";
import { sessionNotFound } from "../sqlite/session-create.js";
import type { Session } from "../types.js";
import type { PgDb } from "./pool.js";
import { messageRow, sessionRow } from "./rows.js";

export async function exportStep(
  db: PgDb,
  options: ExportOptions,
  cursor?: ExportCursor,
): Promise<ExportStep> {
  if (options.format !== "jsonl" && options.format !== "markdown") {
    throw new RangeError(`format must be "jsonl" or "markdown", got ${String(options.format)}`);
  }
  const includeHistory = options.includeHistory ?? true;
  const at: ExportCursor = cursor
    ? { ...cursor }
    : { index: 0, afterSession: "", session: null, afterOrdinal: -1 };
  let chunk = "";
  let written = 0;
  while (written < EXPORT_PAGE) {
    if (at.session === null) {
      const session = await nextSession(db, options.sessionIds, at);
      if (!session) return { chunk, next: null };
      chunk +=
        options.format === "jsonl"
          ? `${JSON.stringify({ type: "session", session })}\n`
          : markdownHeader(session);
      at.session = session.id;
      at.afterSession = session.id;
      at.afterOrdinal = -1;
    }
    const { rows } = await db.query(
      "export messages",
      `SELECT * FROM messages WHERE session_id = $1 AND ordinal > $2 ${includeHistory ? "" : "AND active = 1"}
       ORDER BY ordinal LIMIT ${EXPORT_PAGE}`,
      [at.session, at.afterOrdinal],
    );
    for (const raw of rows) {
      const message = toMessage(messageRow(raw));
      chunk +=
        options.format === "jsonl"
          ? `${JSON.stringify({ type: "message", message })}\n`
          : markdownMessage(message);
    }
    written += rows.length + 1;
    if (rows.length < EXPORT_PAGE) at.session = null;
    else at.afterOrdinal = rows[rows.length - 1]!.ordinal as number;
  }
  return { chunk, next: at };
}

async function nextSession(
  db: PgDb,
  ids: readonly string[] | undefined,
  at: ExportCursor,
): Promise<Session | undefined> {
  if (ids) {
    const id = ids[at.index];
    if (id === undefined) return undefined;
    at.index++;
    const { rows } = await db.query("export a session", "SELECT * FROM sessions WHERE id = $1", [
      id,
    ]);
    if (!rows[0]) throw sessionNotFound(id);
    return toSession(sessionRow(rows[0]));
  }
  const { rows } = await db.query(
    "export sessions",
    `SELECT * FROM sessions WHERE id COLLATE "C" > $1 ORDER BY id COLLATE "C" LIMIT 1`,
    [at.afterSession],
  );
  return rows[0] ? toSession(sessionRow(rows[0])) : undefined;
}
