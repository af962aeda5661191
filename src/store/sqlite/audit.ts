/** The audit trail's statements on SQLite (../audit.ts decides). */
import {
  AUDIT_COLUMNS,
  type AuditEntry,
  type AuditRow,
  type AuditSql,
  auditValues,
  toAuditEntry,
} from "../audit.js";
import type { Access } from "./access.js";
import type { Connection } from "./connection.js";

const INSERT = `INSERT INTO audit_log (${AUDIT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** Append `row` on a connection inside a write transaction (the act's own); the row's id. */
export function insertAudit(conn: Connection, row: AuditRow): number {
  return Number(conn.stmt(INSERT).run(...auditValues(row)).lastInsertRowid);
}

export class SqliteAudit implements AuditSql {
  constructor(private readonly access: Access) {}

  now(): number {
    return this.access.now();
  }

  append(row: AuditRow): Promise<number> {
    return this.access.writeTransaction((conn) => insertAudit(conn, row));
  }

  async list(since: number, before: number | null, limit: number): Promise<AuditEntry[]> {
    const rows = this.access
      .read()
      .stmt(`SELECT * FROM audit_log WHERE at >= ? AND id < ? ORDER BY id DESC LIMIT +?`)
      .all(since, before ?? Number.MAX_SAFE_INTEGER, limit) as Record<string, unknown>[];
    return rows.map(toAuditEntry);
  }
}
