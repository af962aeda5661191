/**
 * Pruning, idle ends and fingerprints on SQLite: the statements behind
 * Sessions.prune(), endIdle(), fingerprint() and deleteIfUnchanged() (the
 * rules are ../prune.ts's). Each lineage is deleted in its own write
 * transaction, its members read again there.
 */

import type { AuditRow } from "../audit.js";
import { type LineageRow, type SessionFingerprint, unchanged } from "../prune.js";
import type { Access } from "./access.js";
import { insertAudit } from "./audit.js";

const LINEAGE = "SELECT id, parent_id, ended_at, pinned, archived FROM sessions";

/** Every session's lineage columns; unless `dryRun`, HEARTH_READ_ONLY first on a reader store. */
export function lineageRows(access: Access, dryRun: boolean): LineageRow[] {
  const rows = access.read().stmt(LINEAGE).all() as LineageRow[];
  if (!dryRun) access.write();
  return rows;
}

export function deleteLineage(
  access: Access,
  ids: string[],
  qualifies: (r: LineageRow) => boolean,
  audit: AuditRow,
): Promise<boolean> {
  return access.writeTransaction((conn) => {
    const recheck = conn.stmt(`${LINEAGE} WHERE id = ?`);
    const now = ids.map((id) => recheck.get(id) as LineageRow | undefined);
    if (!now.every((r) => r !== undefined && qualifies(r))) return false;
    const del = conn.stmt("DELETE FROM sessions WHERE id = ?");
    for (const id of ids) del.run(id);
    insertAudit(conn, audit);
    return true;
  });
}

const FINGERPRINT = `SELECT s.id AS id, s.updated_at AS updatedAt, s.last_activity_at AS lastActivityAt,
  (SELECT count(*) FROM messages m WHERE m.session_id = s.id) AS messageRows,
  (SELECT max(m.id) FROM messages m WHERE m.session_id = s.id) AS maxMessageId
  FROM sessions s WHERE s.id = ?`;

export function fingerprint(access: Access, id: string): SessionFingerprint | undefined {
  return access.read().stmt(FINGERPRINT).get(id) as SessionFingerprint | undefined;
}

export function deleteIfUnchanged(
  access: Access,
  expected: SessionFingerprint,
  audit: AuditRow,
): Promise<boolean> {
  return access.writeTransaction((conn) => {
    const now = conn.stmt(FINGERPRINT).get(expected.id) as SessionFingerprint | undefined;
    if (!unchanged(now, expected)) return false;
    if (conn.stmt("DELETE FROM sessions WHERE id = ?").run(expected.id).changes !== 1) return false;
    insertAudit(conn, audit);
    return true;
  });
}

const IDLE_SESSIONS = "FROM sessions WHERE ended_at IS NULL AND last_activity_at <= ?";

export async function endIdle(access: Access, cutoff: number): Promise<string[]> {
  // The common case, nothing idle, is one read: no write lock, no commit, no
  // fsync (a gateway sweeps every profile it serves each minute).
  if (!access.probe().stmt(`SELECT 1 ${IDLE_SESSIONS} LIMIT 1`).get(cutoff)) return [];
  return access.writeTransaction((conn) => {
    const ids = (conn.stmt(`SELECT id ${IDLE_SESSIONS}`).all(cutoff) as { id: string }[]).map(
      (r) => r.id,
    );
    const end = conn.stmt(
      "UPDATE sessions SET ended_at = ?, end_reason = 'idle', updated_at = ? WHERE id = ? AND ended_at IS NULL",
    );
    const now = access.now();
    for (const id of ids) end.run(now, now, id);
    return ids;
  });
}
