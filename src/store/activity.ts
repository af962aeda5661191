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

/** Tokens one model spent in one bucket of one platform (the model is the message's metadata.model). */
export interface ActivityUsage {
  at: number;
  source: string;
  model: string | null;
  tokensIn: number;
  tokensOut: number;
}

export interface ActivityBucket extends ActivityCounts {
  /** Turn latency (the user message to the reply), null without turns. */
  p50Ms: number | null;
  p95Ms: number | null;
  /** The bucket's tokens per model (what a price table needs); empty when none was reported. */
  usage: { model: string | null; tokensIn: number; tokensOut: number }[];
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

/**
 * Tokens per (bucket, platform, model); `model` is the backend's SQL for a
 * message's metadata.model (JSON is read differently by each).
 */
export function usageSql(ph: Ph, r: ActivityRange, model: string): string {
  const b = ph(r.bucketMs);
  const b2 = ph(r.bucketMs);
  return `SELECT CAST(m.created_at / ${b} AS BIGINT) * ${b2} AS at, s.source AS source,
      ${model} AS model,
      sum(coalesce(m.tokens_in, 0)) AS tokens_in,
      sum(coalesce(m.tokens_out, 0)) AS tokens_out
    FROM messages m JOIN sessions s ON s.id = m.session_id
    WHERE m.id > ${startIdSql(ph, r.since)} AND m.created_at >= ${ph(r.since)}
      AND m.role = 'assistant' AND (m.tokens_in IS NOT NULL OR m.tokens_out IS NOT NULL)
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`;
}

/** A backend's rows of usageSql, as numbers. */
export function usageFrom(rows: Record<string, unknown>[]): ActivityUsage[] {
  return rows.map((r) => ({
    at: Number(r.at),
    source: String(r.source),
    model: typeof r.model === "string" ? r.model : null,
    tokensIn: Number(r.tokens_in),
    tokensOut: Number(r.tokens_out),
  }));
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

/** Rows grouped by their (bucket, platform). */
function byBucket<T extends { at: number; source: string }>(rows: T[]): Map<string, T[]> {
  const map = new Map<string, T[]>();
  for (const r of rows) {
    const k = `${r.at}\u0000${r.source}`;
    const list = map.get(k);
    if (list) list.push(r);
    else map.set(k, [r]);
  }
  return map;
}

/** Counts, latencies and usage into buckets with p50/p95 and tokens per model. */
export function toBuckets(
  counts: ActivityCounts[],
  latencies: ActivityLatency[],
  usage: ActivityUsage[] = [],
): ActivityBucket[] {
  const ms = byBucket(latencies);
  const used = byBucket(usage);
  return counts.map((c) => {
    const k = `${c.at}\u0000${c.source}`;
    const sorted = (ms.get(k) ?? []).map((l) => l.ms).sort((a, b) => a - b);
    return {
      ...c,
      p50Ms: percentile(sorted, 0.5),
      p95Ms: percentile(sorted, 0.95),
      usage: (used.get(k) ?? []).map(({ model, tokensIn, tokensOut }) => ({
        model,
        tokensIn,
        tokensOut,
      })),
    };
  });
}
