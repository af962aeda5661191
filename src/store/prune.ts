/**
 * The rules of pruning, whatever the backend: which sessions a prune may
 * delete (ended before the cutoff, pinned and archived ones only when asked),
 * the compaction lineages (sessions linked by parent_id) that go whole or
 * not at all, and the fingerprint a compare-and-set delete compares.
 */

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

/** What a prune reads of a session (the columns, as numbers). */
export interface LineageRow {
  id: string;
  parent_id: string | null;
  ended_at: number | null;
  pinned: number;
  archived: number;
}

/** A fingerprint that any change to a session or its messages changes. */
export interface SessionFingerprint {
  id: string;
  updatedAt: number;
  lastActivityAt: number;
  messageRows: number;
  maxMessageId: number | null;
}

/** Whether a session may be pruned: ended at or before `cutoff`, not pinned or archived unless asked. */
export function prunable(options: PruneOptions, cutoff: number): (r: LineageRow) => boolean {
  return (r) =>
    r.ended_at !== null &&
    r.ended_at <= cutoff &&
    (options.includePinned === true || r.pinned === 0) &&
    (options.includeArchived === true || r.archived === 0);
}

/** The compaction lineages of `rows`: the sessions linked by parent_id, a group each. */
export function lineages(rows: LineageRow[]): LineageRow[][] {
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
  const groups = new Map<string, LineageRow[]>();
  for (const r of rows) {
    const root = find(r.id);
    groups.set(root, [...(groups.get(root) ?? []), r]);
  }
  return [...groups.values()];
}

/** Whether the session is still exactly as `expected` fingerprinted it (compare-and-set). */
export function unchanged(now: SessionFingerprint | undefined, expected: SessionFingerprint) {
  return (
    now !== undefined &&
    now.updatedAt === expected.updatedAt &&
    now.lastActivityAt === expected.lastActivityAt &&
    now.messageRows === expected.messageRows &&
    now.maxMessageId === expected.maxMessageId
  );
}
