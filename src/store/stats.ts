/**
 * Health samples (schema 4), the part every backend shares: the sample and
 * day shapes, the defaults, and the arithmetic of days. A small table the
 * long-lived processes add a row to every `maintenance.healthSampleMs`, an
 * ordinary row write, so the dashboard can chart file sizes and messages
 * per day over time without ever scanning the messages. A backend reads and
 * writes the rows (StatsSql: sqlite/stats.ts, pg/stats.ts).
 */

/** One health sample: the store's files and how many messages had been stored, at a moment. */
export interface HealthSample {
  /** Epoch milliseconds. */
  at: number;
  databaseBytes: number;
  walBytes: number;
  /** max(messages.id) at that moment: the difference between two samples is the messages stored in between. */
  lastMessageId: number;
}

/** A day's figures for charts: the last sample of the day, and the messages stored that day. */
export interface HealthDay {
  /** Start of the day (UTC), epoch milliseconds. */
  day: number;
  databaseBytes: number;
  walBytes: number;
  /** Messages stored that day, from the samples (the first day sampled counts from its first sample). */
  messages: number;
}

const DAY = 86_400_000;

/** The most samples one samples() call returns by default. */
const SAMPLES_PAGE = 20_000;

/** The most samples days() reads. */
const DAYS_SAMPLES = 100_000;

/** The rows of health samples, on one backend. */
export interface StatsSql {
  /**
   * In one transaction: unless a sample younger than `minIntervalMs` exists
   * (several processes may sample one store), add a sample of now; delete
   * samples older than `keepMs`. Returns the sample written, or null.
   */
  record(options: { minIntervalMs: number; keepMs: number }): Promise<HealthSample | null>;
  /** A sample of this instant, not stored. */
  current(): Promise<HealthSample>;
  /** The newest sample, or null. */
  latest(): Promise<HealthSample | null>;
  /** Samples at or after `since`, oldest first, at most `limit`. */
  samples(since: number, limit: number): Promise<HealthSample[]>;
}

/** Health samples over time (file sizes, messages stored) for the dashboard's chart. */
export class Stats {
  constructor(private readonly sql: StatsSql) {}

  /**
   * Add a sample now unless one younger than `minIntervalMs` exists (several
   * processes may sample one store), and delete samples older than `keepMs`.
   * One short write transaction. Returns the sample written, or null.
   */
  async record(options: { minIntervalMs: number; keepMs: number }): Promise<HealthSample | null> {
    return this.sql.record(options);
  }

  /** A sample of this instant, not stored: the store's size and max(messages.id) now. */
  async current(): Promise<HealthSample> {
    return this.sql.current();
  }

  /** The newest sample, or null (a primary-key lookup). */
  async latest(): Promise<HealthSample | null> {
    return this.sql.latest();
  }

  /** Samples at or after `since`, oldest first (a primary-key range), at most `limit`. */
  async samples(options: { since: number; limit?: number }): Promise<HealthSample[]> {
    return this.sql.samples(options.since, options.limit ?? SAMPLES_PAGE);
  }

  /**
   * One row per UTC day since `since` that has samples: its last sample's
   * file sizes and the messages stored that day (this day's last
   * `lastMessageId` minus the previous sampled day's, or its own first
   * sample's for the first day; never below 0, since
   * deleting the newest messages can lower max(id)). `now`, a sample taken
   * this instant and not stored, ends the last day (today so far).
   */
  async days(options: { since: number; now?: HealthSample }): Promise<HealthDay[]> {
    const from = options.since - (options.since % DAY);
    // The day before too, for the first day's baseline; a primary-key range.
    return healthDays(await this.sql.samples(from - DAY, DAYS_SAMPLES), options);
  }
}

/** Stats.days() from the samples it read. */
function healthDays(
  rows: HealthSample[],
  options: { since: number; now?: HealthSample },
): HealthDay[] {
  const from = options.since - (options.since % DAY);
  if (options.now && options.now.at > (rows.at(-1)?.at ?? 0)) rows.push(options.now);
  const out: HealthDay[] = [];
  let previousDayLast: number | null = null;
  let current: HealthDay | null = null;
  let last = 0;
  for (const s of rows) {
    const day = s.at - (s.at % DAY);
    if (!current || current.day !== day) {
      if (current) {
        current.messages = Math.max(0, last - (previousDayLast ?? current.messages));
        if (current.day >= from) out.push(current);
        previousDayLast = last;
      }
      // messages holds the day's first lastMessageId until the day is complete.
      current = { day, databaseBytes: 0, walBytes: 0, messages: s.lastMessageId };
    }
    current.databaseBytes = s.databaseBytes;
    current.walBytes = s.walBytes;
    last = s.lastMessageId;
  }
  if (current) {
    current.messages = Math.max(0, last - (previousDayLast ?? current.messages));
    if (current.day >= from) out.push(current);
  }
  return out;
}
