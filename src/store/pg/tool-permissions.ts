import { dollarParams } from "../sql.js";
import {
  PERMISSION_SQL,
  type PermissionDecision,
  type PermissionRequestRow,
  type PermissionRow,
  permissionFromColumns,
  requestParams,
  type ToolPermissionsSql,
} from "../tool-permissions.js";
import type { PgClient, PgDb } from "./pool.js";
import { refuseNul } from "./rows.js";

const SQL = Object.fromEntries(
  Object.entries(PERMISSION_SQL).map(([k, v]) => [k, dollarParams(v)]),
) as Record<keyof typeof PERMISSION_SQL, string>;

/** Tool permission requests and grants on PostgreSQL (../tool-permissions.ts decides): any host may answer. */
export class PgToolPermissions implements ToolPermissionsSql {
  constructor(private readonly db: PgDb) {}

  now(): number {
    return Date.now();
  }

  request(row: PermissionRequestRow): Promise<PermissionRow> {
    refuseNul(row.summary, "summary");
    refuseNul(row.tool, "tool");
    return this.db.transaction("ask a tool permission", async (client) => {
      await client.query(SQL.insert, requestParams(row));
      return (await getOn(client, row.sessionId, row.callId))!;
    });
  }

  async get(sessionId: string, callId: string): Promise<PermissionRow | undefined> {
    const { rows } = await this.db.query("read a tool permission", SQL.get, [sessionId, callId]);
    return rows[0] ? permissionFromColumns(rows[0]) : undefined;
  }

  async pending(sessionId: string): Promise<PermissionRow[]> {
    const { rows } = await this.db.query("list tool permissions", SQL.pending, [sessionId]);
    return rows.map(permissionFromColumns);
  }

  decide(
    sessionId: string,
    callId: string,
    decision: PermissionDecision,
    at: number,
  ): Promise<PermissionRow | undefined> {
    return this.db.transaction("decide a tool permission", async (client) => {
      const r = await client.query(SQL.decide, [decision, at, sessionId, callId]);
      const row = await getOn(client, sessionId, callId);
      if (r.rowCount === 1 && decision === "allow_always" && row)
        await client.query(SQL.grant, [sessionId, row.tool, at]);
      return row;
    });
  }

  async granted(sessionId: string, tool: string): Promise<boolean> {
    const { rows } = await this.db.query("read a tool grant", SQL.granted, [sessionId, tool]);
    return rows.length > 0;
  }
}

async function getOn(
  client: PgClient,
  sessionId: string,
  callId: string,
): Promise<PermissionRow | undefined> {
  const { rows } = await client.query(SQL.get, [sessionId, callId]);
  return rows[0] ? permissionFromColumns(rows[0] as Record<string, unknown>) : undefined;
}
