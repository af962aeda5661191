import type { HealthSample, StatsSql } from "../stats.js";
import { int } from "./convert.js";
import type { PgDb } from "./pool.js";

/**
 * Health samples (../stats.ts) on PostgreSQL, with the server's figures:
 * `databaseBytes` is pg_database_size(current_database()), and `walBytes`
 * is always 0 (the WAL belongs to the whole server, shared by every
 * database on it, and the checkpoint position needs privileges hearth's
 * role may not have; docs/api.md says so). Several processes on several
 * hosts may sample one store: record() checks for a recent sample and
 * inserts under a transaction-scoped advisory lock, so one sample is
 * written per interval.
 */
export class PgStats implements StatsSql {
  constructor(private readonly db: PgDb) {}

  async record(options: { minIntervalMs: number; keepMs: number }): Promise<HealthSample | null> {
    return this.db.transaction("record a health sample", async (client) => {
      await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [
        "hearth:health_samples.record",
      ]);
      const now = Date.now();
      const recent = await client.query("SELECT 1 FROM health_samples WHERE at > $1 LIMIT 1", [
        now - options.minIntervalMs,
      ]);
      if (recent.rowCount !== 0) return null;
      const { rows } = await client.query(SAMPLE_SQL);
      const sample = toSample({ ...rows[0], at: now, wal_bytes: 0 });
      await client.query(
        `INSERT INTO health_samples (at, database_bytes, wal_bytes, last_message_id)
         VALUES ($1, $2, $3, $4) ON CONFLICT (at) DO NOTHING`,
        [sample.at, sample.databaseBytes, sample.walBytes, sample.lastMessageId],
      );
      await client.query("DELETE FROM health_samples WHERE at < $1", [now - options.keepMs]);
      return sample;
    });
  }

  async current(): Promise<HealthSample> {
    const { rows } = await this.db.query("sample the store", SAMPLE_SQL);
    return toSample({ ...rows[0], at: Date.now(), wal_bytes: 0 });
  }

  async latest(): Promise<HealthSample | null> {
    const { rows } = await this.db.query(
      "read the latest health sample",
      "SELECT * FROM health_samples ORDER BY at DESC LIMIT 1",
    );
    return rows[0] ? toSample(rows[0]) : null;
  }

  async samples(since: number, limit: number): Promise<HealthSample[]> {
    const { rows } = await this.db.query(
      "read health samples",
      "SELECT * FROM health_samples WHERE at >= $1 ORDER BY at LIMIT $2",
      [since, limit],
    );
    return rows.map(toSample);
  }
}

/** This instant's figures (the row of a sample but `at` and `wal_bytes`). */
const SAMPLE_SQL = `SELECT pg_database_size(current_database()) AS database_bytes,
  coalesce((SELECT max(id) FROM messages), 0) AS last_message_id`;

function toSample(row: Record<string, unknown>): HealthSample {
  return {
    at: int(row.at),
    databaseBytes: int(row.database_bytes),
    walBytes: int(row.wal_bytes),
    lastMessageId: int(row.last_message_id),
  };
}
