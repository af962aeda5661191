import { lstatSync } from "node:fs";
import type { Access } from "./access.js";

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

/**
 * Health samples (schema 4): a small table the long-lived processes add a
 * row to every `maintenance.healthSampleMs`, an ordinary row write, so the
 * dashboard can chart file sizes and messages per day over time without
 * ever scanning the messages.
 */
export class Stats {
  constructor(private readonly access: Access) {}

  /**
   * Add a sample now unless one younger than `minIntervalMs` exists (several
   * processes may sample one store), and delete samples older than `keepMs`.
   * One short IMMEDIATE transaction. Returns the sample written, or null.
   */
  async record(options: { minIntervalMs: number; keepMs: number }): Promise<HealthSample | null> {
    const size = (suffix: string) => fileSize(this.access.path + suffix);
    return this.access.writeTransaction((conn) => {
      const now = this.access.now();
      const recent = conn
        .stmt("SELECT 1 FROM health_samples WHERE at > ? LIMIT 1")
        .get(now - options.minIntervalMs);
      if (recent) return null;
      const { id } = conn.stmt("SELECT max(id) AS id FROM messages").get() as { id: number | null };
      const sample: HealthSample = {
        at: now,
        databaseBytes: size(""),
        walBytes: size("-wal"),
        lastMessageId: id ?? 0,
      };
      conn
        .stmt(
          `INSERT INTO health_samples (at, database_bytes, wal_bytes, last_message_id)
           VALUES (?, ?, ?, ?) ON CONFLICT (at) DO NOTHING`,
        )
        .run(sample.at, sample.databaseBytes, sample.walBytes, sample.lastMessageId);
      conn.stmt("DELETE FROM health_samples WHERE at < ?").run(now - options.keepMs);
      return sample;
    });
  }

  /** A sample of this instant, not stored: the files' sizes and max(messages.id) now. */
  async current(): Promise<HealthSample> {
    const { id } = this.access.read().stmt("SELECT max(id) AS id FROM messages").get() as {
      id: number | null;
    };
    return {
      at: this.access.now(),
      databaseBytes: fileSize(this.access.path),
      walBytes: fileSize(`${this.access.path}-wal`),
      lastMessageId: id ?? 0,
    };
  }

  /** The newest sample, or null (a primary-key lookup). */
  async latest(): Promise<HealthSample | null> {
    const row = this.access
      .read()
      .stmt("SELECT * FROM health_samples ORDER BY at DESC LIMIT 1")
      .get() as SampleRow | undefined;
    return row ? toSample(row) : null;
  }

  /** Samples at or after `since`, oldest first (a primary-key range), at most `limit`. */
  async samples(options: { since: number; limit?: number }): Promise<HealthSample[]> {
    const rows = this.access
      .read()
      .stmt("SELECT * FROM health_samples WHERE at >= ? ORDER BY at LIMIT +?")
      .all(options.since, options.limit ?? 20_000) as SampleRow[];
    return rows.map(toSample);
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
    return healthDays(await this.samples({ since: from - DAY, limit: 100_000 }), options);
  }
}

/** Stats.days() from the samples it read (both backends share this arithmetic). */
export function healthDays(
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

interface SampleRow {
  at: number;
  database_bytes: number;
  wal_bytes: number;
  last_message_id: number;
}

function toSample(row: SampleRow): HealthSample {
  return {
    at: row.at,
    databaseBytes: row.database_bytes,
    walBytes: row.wal_bytes,
    lastMessageId: row.last_message_id,
  };
}

function fileSize(path: string): number {
  try {
    return lstatSync(path).size;
  } catch {
    return 0;
  }
}
