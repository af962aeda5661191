/** The audit trail's statements on PostgreSQL (../audit.ts decides). */
import {
  AUDIT_COLUMNS,
  type AuditEntry,
  type AuditRow,
  type AuditSql,
  auditValues,
  toAuditEntry,
} from "../audit.js";
import type { PgClient, PgDb } from "./pool.js";
import { refuseNul } from "./rows.js";

const INSERT = `INSERT INTO audit_log (${AUDIT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`;

/** Append `row` on a client inside a transaction (the act's own); the row's id. */
export async function insertAudit(client: PgClient, row: AuditRow): Promise<number> {
  refuseNul(row.actorId, "actor.id");
  refuseNul(row.via, "actor.via");
  refuseNul(row.address, "actor.address");
  const { rows } = await client.query(INSERT, auditValues(row));
  return Number(rows[0].id);
}

export class PgAudit implements AuditSql {
  constructor(private readonly db: PgDb) {}

  now(): number {
    return Date.now();
  }

  append(row: AuditRow): Promise<number> {
    return this.db.transaction("record an audit row", (client) => insertAudit(client, row));
  }

  async list(since: number, before: number | null, limit: number): Promise<AuditEntry[]> {
    const { rows } = await this.db.query(
      "read the audit trail",
      "SELECT * FROM audit_log WHERE at >= $1 AND id < $2 ORDER BY id DESC LIMIT $3",
      [since, before ?? Number.MAX_SAFE_INTEGER, limit],
    );
    return rows.map(toAuditEntry);
  }
}
