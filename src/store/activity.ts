/**
 * Activity over time (issue 47): per time bucket and platform, messages,
 * finished turns, failed turns, tokens, and turn latency. Both backends run
 * the same SQL (built here with their placeholder style); the percentiles
 * are computed from the newest turns' latencies (at most LATENCY_SAMPLE per
 * read). Messages are read from the id the health samples recorded at the
 * range's start, so a 30-day view reads 30 days of rows, not the table.
 */

/** The most turn latencies one read brings back (the newest first). */
export const LATENCY_SAMPLE = 20_000;

/** The names hearth gives the assistant message that records a failed or cancelled turn. */
export const FAILED_TURN_NAMES = ["hearth.turn_failed", "hearth.turn_cancelled"] as const;

export interface ActivityRange {
  since: number;
  bucketMs: number;
}

/** One bucket of one platform, as the backend counts it. */
export interface ActivityCounts {
  at: number;
  source: string;
  messages: number;
  turns: number;
  errors: number;
  tokensIn: number;
  tokensOut: number;
}

export interface ActivityLatency {
  at: number;
  source: string;
  ms: number;
}

export interface ActivityBucket extends ActivityCounts {
  /** Turn latency (the user message to the reply), null without turns. */
  p50Ms: number | null;
  p95Ms: number | null;
}

type Ph = (value: unknown) => string;

/**
 * The first message id to read: the last id a health sample recorded at
 * or before `since` (0 when none is that old).
 */
export function startIdSql(ph: Ph, since: number): string {
  return `coalesce((SELECT last_message_id FROM health_samples WHERE at <= ${ph(since)}
            ORDER BY at DESC LIMIT 1), 0)`;
}

const failed = (ph: Ph) => FAILED_TURN_NAMES.map((n) => ph(n)).join(", ");

/** Counts per (bucket, platform). */
export function countsSql(ph: Ph, r: ActivityRange): string {
  const b = ph(r.bucketMs);
  const b2 = ph(r.bucketMs);
  const turn = "m.role = 'assistant' AND m.tool_calls IS NULL";
  return `SELECT CAST(m.created_at / ${b} AS BIGINT) * ${b2} AS at, s.source AS source,
      count(*) AS messages,
      sum(CASE WHEN ${turn} THEN 1 ELSE 0 END) AS turns,
      sum(CASE WHEN ${turn} AND m.name IN (${failed(ph)}) THEN 1 ELSE 0 END) AS errors,
      sum(coalesce(m.tokens_in, 0)) AS tokens_in,
      sum(coalesce(m.tokens_out, 0)) AS tokens_out
    FROM messages m JOIN sessions s ON s.id = m.session_id
    WHERE m.id > ${startIdSql(ph, r.since)} AND m.created_at >= ${ph(r.since)}
    GROUP BY 1, 2 ORDER BY 1, 2`;
}

/** The newest turns' latencies: each finished turn's reply minus its user message. */
export function latencySql(ph: Ph, r: ActivityRange): string {
  const b = ph(r.bucketMs);
  const b2 = ph(r.bucketMs);
  return `SELECT at, source, ms FROM (
      SELECT CAST(m.created_at / ${b} AS BIGINT) * ${b2} AS at, s.source AS source, m.id AS id,
        m.created_at - (SELECT u.created_at FROM messages u
          WHERE u.session_id = m.session_id AND u.role = 'user' AND u.ordinal < m.ordinal
          ORDER BY u.ordinal DESC LIMIT 1) AS ms
      FROM messages m JOIN sessions s ON s.id = m.session_id
      WHERE m.id > ${startIdSql(ph, r.since)} AND m.created_at >= ${ph(r.since)}
        AND m.role = 'assistant' AND m.tool_calls IS NULL
      ORDER BY m.id DESC LIMIT ${LATENCY_SAMPLE}) t
    WHERE ms IS NOT NULL`;
}

/** A backend's rows of countsSql, as numbers (PostgreSQL sends bigint sums as strings). */
export function countsFrom(rows: Record<string, unknown>[]): ActivityCounts[] {
  return rows.map((r) => ({
    at: Number(r.at),
    source: String(r.source),
    messages: Number(r.messages),
    turns: Number(r.turns),
    errors: Number(r.errors),
    tokensIn: Number(r.tokens_in),
    tokensOut: Number(r.tokens_out),
  }));
}

/** A backend's rows of latencySql, as numbers. */
export function latenciesFrom(rows: Record<string, unknown>[]): ActivityLatency[] {
  return rows.map((r) => ({ at: Number(r.at), source: String(r.source), ms: Number(r.ms) }));
}

/** The q-th percentile (0..1) of sorted values (nearest rank). */
function percentile(sorted: number[], q: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? null;
}

/** Counts and latencies into buckets with p50/p95. */
export function toBuckets(
  counts: ActivityCounts[],
  latencies: ActivityLatency[],
): ActivityBucket[] {
  const byKey = new Map<string, number[]>();
  for (const l of latencies) {
    const k = `${l.at}\u0000${l.source}`;
    const list = byKey.get(k);
    if (list) list.push(l.ms);
    else byKey.set(k, [l.ms]);
  }
  return counts.map((c) => {
    const ms = (byKey.get(`${c.at}\u0000${c.source}`) ?? []).sort((a, b) => a - b);
    return { ...c, p50Ms: percentile(ms, 0.5), p95Ms: percentile(ms, 0.95) };
  });
}
