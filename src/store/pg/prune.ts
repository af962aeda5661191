/**
 * Pruning, idle ends and fingerprints on PostgreSQL (mirrors ../prune.ts):
 * a compaction lineage goes whole, in one transaction, or not at all, each
 * member checked again under its row lock inside that transaction.
 */
import type { PruneOptions, PruneResult, SessionFingerprint } from "../sqlite/prune.js";
import type { PgDb } from "./pool.js";
import { num } from "./rows.js";

interface Row {
  id: string;
  parent_id: string | null;
  ended_at: number | null;
  pinned: number;
  archived: number;
}

function toRow(r: Record<string, unknown>): Row {
  return {
    id: r.id as string,
    parent_id: r.parent_id as string | null,
    ended_at: r.ended_at === null ? null : num(r.ended_at),
    pinned: r.pinned as number,
    archived: r.archived as number,
  };
}

export async function pruneSessions(db: PgDb, options: PruneOptions): Promise<PruneResult> {
  const cutoff = Date.now() - options.olderThanMs;
  const qualifies = (r: Row) =>
    r.ended_at !== null &&
    r.ended_at <= cutoff &&
    (options.includePinned === true || r.pinned === 0) &&
    (options.includeArchived === true || r.archived === 0);
  const { rows } = await db.query(
    "prune sessions",
    "SELECT id, parent_id, ended_at, pinned, archived FROM sessions",
  );
  const result: PruneResult = { sessions: [], lineages: 0, keptLineages: 0 };
  for (const members of components(rows.map(toRow))) {
    if (!members.every(qualifies)) {
      if (members.some(qualifies)) result.keptLineages++;
      continue;
    }
    const ids = members.map((m) => m.id);
    if (!options.dryRun) {
      const deleted = await db.transaction("prune sessions", async (client) => {
        const now = await client.query(
          `SELECT id, parent_id, ended_at, pinned, archived FROM sessions
            WHERE id = ANY($1::text[]) FOR UPDATE`,
          [ids],
        );
        if (now.rows.length !== ids.length || !now.rows.map(toRow).every(qualifies)) return false;
        await client.query("DELETE FROM sessions WHERE id = ANY($1::text[])", [ids]);
        return true;
      });
      if (!deleted) {
        result.keptLineages++;
        continue;
      }
    }
    result.sessions.push(...ids);
    result.lineages++;
  }
  return result;
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

export async function deleteIfUnchanged(db: PgDb, expected: SessionFingerprint): Promise<boolean> {
  return db.transaction("delete a session if unchanged", async (client) => {
    await client.query("SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE", [expected.id]);
    const now = toFingerprint((await client.query(FINGERPRINT, [expected.id])).rows[0]);
    if (
      !now ||
      now.updatedAt !== expected.updatedAt ||
      now.lastActivityAt !== expected.lastActivityAt ||
      now.messageRows !== expected.messageRows ||
      now.maxMessageId !== expected.maxMessageId
    )
      return false;
    const { rowCount } = await client.query("DELETE FROM sessions WHERE id = $1", [expected.id]);
    return rowCount === 1;
  });
}

export async function endIdleSessions(db: PgDb, idleMs: number): Promise<string[]> {
  const cutoff = Date.now() - idleMs;
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

function components(rows: Row[]): Row[][] {
  const parent = new Map<string, string>();
  const find = (id: string): string => {
    let root = id;
    while (parent.get(root) !== root) root = parent.get(root)!;
    parent.set(id, root);
    return root;
  };
  for (const r of rows) parent.set(r.id, r.id);
  for (const r of rows) {
    if (r.parent_id && parent.has(r.parent_id)) parent.set(find(r.id), find(r.parent_id));
  }
  const groups = new Map<string, Row[]>();
  for (const r of rows) {
    const root = find(r.id);
    groups.set(root, [...(groups.get(root) ?? []), r]);
  }
  return [...groups.values()];
}
