/**
 * Pruning, idle ends and fingerprints on PostgreSQL: the statements behind
 * Sessions.prune(), endIdle(), fingerprint() and deleteIfUnchanged() (the
 * rules are ../prune.ts's). A lineage is deleted in one transaction, each
 * member read again under its row lock there.
 */

import type { AuditRow } from "../audit.js";
import { type LineageRow, type SessionFingerprint, unchanged } from "../prune.js";
import { insertAudit } from "./audit.js";
import type { PgDb } from "./pool.js";
import { num } from "./rows.js";

const LINEAGE = "SELECT id, parent_id, ended_at, pinned, archived FROM sessions";

/** A lineage row as `pg` returns it (ended_at is BIGINT, a string), made numbers. */
function toRow(r: Record<string, unknown>): LineageRow {
  return {
    id: r.id as string,
    parent_id: r.parent_id as string | null,
    ended_at: r.ended_at === null ? null : num(r.ended_at),
    pinned: r.pinned as number,
    archived: r.archived as number,
  };
}

export async function lineageRows(db: PgDb): Promise<LineageRow[]> {
  const { rows } = await db.query("prune sessions", LINEAGE);
  return rows.map(toRow);
}

export function deleteLineage(
  db: PgDb,
  ids: string[],
  qualifies: (r: LineageRow) => boolean,
  audit: AuditRow,
): Promise<boolean> {
  return db.transaction("prune sessions", async (client) => {
    const now = await client.query(`${LINEAGE} WHERE id = ANY($1::text[]) FOR UPDATE`, [ids]);
    if (now.rows.length !== ids.length || !now.rows.map(toRow).every(qualifies)) return false;
    await client.query("DELETE FROM sessions WHERE id = ANY($1::text[])", [ids]);
    await insertAudit(client, audit);
    return true;
  });
}

const FINGERPRINT = `SELECT s.id AS id, s.updated_at AS "updatedAt", s.last_activity_at AS "lastActivityAt",
  (SELECT count(*) FROM messages m WHERE m.session_id = s.id) AS "messageRows",
  (SELECT max(m.id) FROM messages m WHERE m.session_id = s.id) AS "maxMessageId"
  FROM sessions s WHERE s.id = $1`;

function toFingerprint(r: Record<string, unknown> | undefined): SessionFingerprint | undefined {
  if (!r) return undefined;
  return {
    id: r.id as string,
    updatedAt: num(r.updatedAt),
    lastActivityAt: num(r.lastActivityAt),
    messageRows: num(r.messageRows),
    maxMessageId: r.maxMessageId === null ? null : num(r.maxMessageId),
  };
}

export async function fingerprint(db: PgDb, id: string): Promise<SessionFingerprint | undefined> {
  const { rows } = await db.query("fingerprint a session", FINGERPRINT, [id]);
  return toFingerprint(rows[0]);
}

export async function deleteIfUnchanged(
  db: PgDb,
  expected: SessionFingerprint,
  audit: AuditRow,
): Promise<boolean> {
  return db.transaction("delete a session if unchanged", async (client) => {
    await client.query("SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE", [expected.id]);
    const now = toFingerprint((await client.query(FINGERPRINT, [expected.id])).rows[0]);
    if (!unchanged(now, expected)) return false;
    const { rowCount } = await client.query("DELETE FROM sessions WHERE id = $1", [expected.id]);
    if (rowCount !== 1) return false;
    await insertAudit(client, audit);
    return true;
  });
}

export async function endIdle(db: PgDb, cutoff: number): Promise<string[]> {
  const now = Date.now();
  const { rows } = await db.transaction("end idle sessions", (client) =>
    client.query(
      `UPDATE sessions SET ended_at = $1, end_reason = 'idle', updated_at = $1
        WHERE ended_at IS NULL AND last_activity_at <= $2 RETURNING id`,
      [now, cutoff],
    ),
  );
  return rows.map((r) => r.id as string);
}
