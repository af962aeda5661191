import type { Access } from "./access.js";

export interface PruneOptions {
  /** Sessions ended at least this long ago (ms). */
  olderThanMs: number;
  includePinned?: boolean;
  includeArchived?: boolean;
  dryRun?: boolean;
}

export interface PruneResult {
  /** Ids deleted (or, with dryRun, that would be). */
  sessions: string[];
  /** Lineages (sessions linked by parent_id) deleted whole. */
  lineages: number;
  /** Lineages kept because one member is live, recent, pinned or archived. */
  keptLineages: number;
}

interface Row {
  id: string;
  parent_id: string | null;
  ended_at: number | null;
  pinned: number;
  archived: number;
}

/**
 * Delete ended sessions older than the cutoff. A compaction lineage
 * (sessions linked by parent_id) goes whole, in one transaction, or not at
 * all: it is deleted only when every member qualifies, and each member is
 * checked again inside the transaction (a member that resumed meanwhile
 * keeps the whole lineage).
 */
export async function pruneSessions(access: Access, options: PruneOptions): Promise<PruneResult> {
  const cutoff = access.now() - options.olderThanMs;
  const qualifies = (r: Row) =>
    r.ended_at !== null &&
    r.ended_at <= cutoff &&
    (options.includePinned === true || r.pinned === 0) &&
    (options.includeArchived === true || r.archived === 0);
  const rows = access
    .read()
    .stmt("SELECT id, parent_id, ended_at, pinned, archived FROM sessions")
    .all() as Row[];
  const lineages = components(rows);
  const result: PruneResult = { sessions: [], lineages: 0, keptLineages: 0 };
  const conn = options.dryRun ? undefined : access.write();
  for (const members of lineages) {
    if (!members.every(qualifies)) {
      if (members.some(qualifies)) result.keptLineages++;
      continue;
    }
    const ids = members.map((m) => m.id);
    if (conn) {
      const deleted = await access.writeTransaction((conn) => {
        const recheck = conn.stmt(
          "SELECT id, parent_id, ended_at, pinned, archived FROM sessions WHERE id = ?",
        );
        const now = ids.map((id) => recheck.get(id) as Row | undefined);
        if (!now.every((r) => r !== undefined && qualifies(r))) return false;
        const del = conn.stmt("DELETE FROM sessions WHERE id = ?");
        for (const id of ids) del.run(id);
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

/** A fingerprint that any change to a session or its messages changes. */
export interface SessionFingerprint {
  id: string;
  updatedAt: number;
  lastActivityAt: number;
  messageRows: number;
  maxMessageId: number | null;
}

const FINGERPRINT = `SELECT s.id AS id, s.updated_at AS updatedAt, s.last_activity_at AS lastActivityAt,
  (SELECT count(*) FROM messages m WHERE m.session_id = s.id) AS messageRows,
  (SELECT max(m.id) FROM messages m WHERE m.session_id = s.id) AS maxMessageId
  FROM sessions s WHERE s.id = ?`;

export function fingerprint(access: Access, id: string): SessionFingerprint | undefined {
  return access.read().stmt(FINGERPRINT).get(id) as SessionFingerprint | undefined;
}

/** Delete a session only if it is exactly as fingerprinted (compare-and-set); returns whether it was. */
export async function deleteIfUnchanged(
  access: Access,
  expected: SessionFingerprint,
): Promise<boolean> {
  return access.writeTransaction((conn) => {
    const now = conn.stmt(FINGERPRINT).get(expected.id) as SessionFingerprint | undefined;
    if (
      !now ||
      now.updatedAt !== expected.updatedAt ||
      now.lastActivityAt !== expected.lastActivityAt ||
      now.messageRows !== expected.messageRows ||
      now.maxMessageId !== expected.maxMessageId
    )
      return false;
    return conn.stmt("DELETE FROM sessions WHERE id = ?").run(expected.id).changes === 1;
  });
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

/** End every open session idle for at least `idleMs` (reason "idle"); returns the ids. */
export async function endIdleSessions(access: Access, idleMs: number): Promise<string[]> {
  const cutoff = access.now() - idleMs;
  return access.writeTransaction((conn) => {
    const ids = (
      conn
        .stmt("SELECT id FROM sessions WHERE ended_at IS NULL AND last_activity_at <= ?")
        .all(cutoff) as { id: string }[]
    ).map((r) => r.id);
    const end = conn.stmt(
      "UPDATE sessions SET ended_at = ?, end_reason = 'idle', updated_at = ? WHERE id = ? AND ended_at IS NULL",
    );
    const now = access.now();
    for (const id of ids) end.run(now, now, id);
    return ids;
  });
}
