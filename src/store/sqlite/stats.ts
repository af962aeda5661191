import { lstatSync } from "node:fs";
import type { HealthSample, StatsSql } from "../stats.js";
import type { Access } from "./access.js";

/** Columns of health_samples as a HealthSample. */
const SAMPLE = `at, database_bytes AS databaseBytes, wal_bytes AS walBytes,
  last_message_id AS lastMessageId`;

/**
 * Health samples (../stats.ts) in a SQLite file: the sizes are the
 * database file's and its WAL's.
 */
export class SqliteStats implements StatsSql {
  constructor(private readonly access: Access) {}

  /** One short IMMEDIATE transaction. */
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

  async latest(): Promise<HealthSample | null> {
    const row = this.access
      .probe()
      .stmt(`SELECT ${SAMPLE} FROM health_samples ORDER BY at DESC LIMIT 1`)
      .get() as HealthSample | undefined;
    return row ?? null;
  }

  async samples(since: number, limit: number): Promise<HealthSample[]> {
    return this.access
      .read()
      .stmt(`SELECT ${SAMPLE} FROM health_samples WHERE at >= ? ORDER BY at LIMIT +?`)
      .all(since, limit) as HealthSample[];
  }
}

function fileSize(path: string): number {
  try {
    return lstatSync(path).size;
  } catch {
    return 0;
  }
}
