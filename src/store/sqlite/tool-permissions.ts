import {
  PERMISSION_SQL,
  type PermissionDecision,
  type PermissionRequestRow,
  type PermissionRow,
  permissionFromColumns,
  requestParams,
  type ToolPermissionsSql,
} from "../tool-permissions.js";
import type { Access } from "./access.js";
import type { Connection } from "./connection.js";

/** Tool permission requests and grants on SQLite (../tool-permissions.ts decides). */
export class SqliteToolPermissions implements ToolPermissionsSql {
  constructor(private readonly access: Access) {}

  now(): number {
    return this.access.now();
  }

  async request(row: PermissionRequestRow): Promise<PermissionRow> {
    return this.access.writeTransaction((conn) => {
      conn.stmt(PERMISSION_SQL.insert).run(...requestParams(row));
      return getOn(conn, row.sessionId, row.callId)!;
    });
  }

  async get(sessionId: string, callId: string): Promise<PermissionRow | undefined> {
    return getOn(this.access.read(), sessionId, callId);
  }

  async pending(sessionId: string): Promise<PermissionRow[]> {
    const rows = this.access.read().stmt(PERMISSION_SQL.pending).all(sessionId);
    return (rows as Record<string, unknown>[]).map(permissionFromColumns);
  }

  async decide(
    sessionId: string,
    callId: string,
    decision: PermissionDecision,
    at: number,
  ): Promise<PermissionRow | undefined> {
    return this.access.writeTransaction((conn) => {
      const { changes } = conn.stmt(PERMISSION_SQL.decide).run(decision, at, sessionId, callId);
      const row = getOn(conn, sessionId, callId);
      if (changes === 1 && decision === "allow_always" && row)
        conn.stmt(PERMISSION_SQL.grant).run(sessionId, row.tool, at);
      return row;
    });
  }

  async granted(sessionId: string, tool: string): Promise<boolean> {
    return this.access.read().stmt(PERMISSION_SQL.granted).get(sessionId, tool) !== undefined;
  }
}

function getOn(conn: Connection, sessionId: string, callId: string): PermissionRow | undefined {
  const row = conn.stmt(PERMISSION_SQL.get).get(sessionId, callId);
  return row ? permissionFromColumns(row as Record<string, unknown>) : undefined;
}
