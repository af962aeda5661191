/**
 * What `hearth doctor` and `hearth ps` show of a PostgreSQL store, each
 * fact read back from the server (never echoed from configuration): its
 * version and role, hearth's schema version, hearth's connections
 * (pg_stat_activity, application_name hearth:<kind>:<pid>@<host>), the
 * advisory locks held and every lock wait with who blocks it, dead-row
 * estimates per table (pg_stat_user_tables), and replication lag when the
 * server has replicas or is one. Read-only: it takes no lock anyone waits for.
 */

import { type CopyInProgress, copyInProgress } from "../../store/copy/interrupted.js";
import type { HostEntry } from "../../store/hosts.js";
import { liveHosts } from "../../store/pg/hosts.js";
import { readVersion } from "../../store/pg/migrate.js";
import type { PgClient } from "../../store/pg/pool.js";
import { PG_LATEST_SCHEMA_VERSION, PG_TABLES } from "../../store/pg/schema.js";

export interface PgConnection {
  /** From application_name hearth:<kind>:<pid>@<host>. */
  kind: string;
  pid: number | null;
  host: string | null;
  applicationName: string;
  /** The server process serving it. */
  backendPid: number;
  clientAddr: string | null;
  state: string | null;
  /** When the connection was made (ISO). */
  since: string | null;
  /** When its open transaction began (ISO), or null. */
  transactionSince: string | null;
  waitEvent: string | null;
}

export interface PgAdvisoryLock {
  backendPid: number;
  applicationName: string;
  key: [number, number];
  /** hearth's own keys by name ("schema migration", "migrate --to copy"), else null. */
  label: string | null;
  mode: string;
  granted: boolean;
}

export interface PgLockWait {
  backendPid: number;
  applicationName: string;
  /** relation, tuple, transactionid (a row lock), advisory, ... */
  lockType: string;
  relation: string | null;
  mode: string;
  /** Backends it waits for (pg_blocking_pids). */
  blockedBy: number[];
  /** When its current statement began (ISO). */
  waitingSince: string | null;
}

export interface PgTableHealth {
  table: string;
  liveRows: number;
  deadRows: number;
  /** dead / (live + dead), 0 when both are 0. */
  deadRatio: number;
  lastVacuum: string | null;
  lastAutovacuum: string | null;
}

export interface PgReplication {
  role: "primary" | "replica";
  /** Replicas streaming from this server (pg_stat_replication). */
  replicas: {
    applicationName: string;
    clientAddr: string | null;
    state: string;
    syncState: string;
    writeLagMs: number | null;
    flushLagMs: number | null;
    replayLagMs: number | null;
  }[];
  /** On a replica: now() - pg_last_xact_replay_timestamp(), in ms (null before the first replay). */
  replayLagMs: number | null;
}

export interface PgView {
  server: { version: string; versionNum: number; database: string; user: string };
  /** Client connections on the whole server, and its max_connections (less the superuser reserve). */
  slots: { used: number; max: number; reserved: number };
  schema: { version: number | null; latest: number };
  connections: PgConnection[];
  locks: { advisory: PgAdvisoryLock[]; waiting: PgLockWait[] };
  tables: PgTableHealth[];
  replication: PgReplication;
  /** The live gateways and dashboards of every host (hearth_hosts, liveness from their presence locks). */
  hosts: HostEntry[];
  /** An unfinished hearth migrate --to copy into this database (its progress row), else null. */
  copy: CopyInProgress | null;
  /** WAL archiving, PostgreSQL's own continuous copy for point-in-time recovery (docs/postgres.md); null: unreadable. */
  archive: { mode: string; command: string; library: string | null } | null;
  counts: {
    sessions: number;
    messages: number;
    activeMessages: number;
    archivedMessages: number;
  } | null;
}

const APP = /^hearth:([^:]+):(\d+)@(.*)$/;
const KNOWN_KEYS: Record<string, string> = {
  [`${0x68656172}:1`]: "schema migration",
  [`${0x68656172}:2`]: "migrate --to copy",
};

const iso = (ms: unknown) =>
  ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString();
const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

export async function readPgView(client: PgClient, url: string): Promise<PgView> {
  const server = (
    await client.query(
      `SELECT current_setting('server_version') AS version, current_setting('server_version_num')::int AS num,
              current_database() AS database, current_user AS "user", pg_is_in_recovery() AS replica`,
    )
  ).rows[0];
  const version = (await readVersion(client, url)) ?? null;
  const slots = (
    await client.query(
      `SELECT (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')::int AS used,
              current_setting('max_connections')::int AS max,
              current_setting('superuser_reserved_connections')::int AS reserved`,
    )
  ).rows[0];
  return {
    server: {
      version: server.version,
      versionNum: server.num,
      database: server.database,
      user: server.user,
    },
    slots: { used: slots.used, max: slots.max, reserved: slots.reserved },
    schema: { version, latest: PG_LATEST_SCHEMA_VERSION },
    connections: await connections(client),
    locks: { advisory: await advisory(client), waiting: await waiting(client) },
    tables: await tables(client),
    replication: await replication(client, server.replica === true),
    hosts: (await hasHostsTable(client)) ? await liveHosts(client) : [],
    copy: version === null ? null : ((await copyInProgress(client)) ?? null),
    archive: await archiving(client),
    counts: version === null ? null : await counts(client),
  };
}

async function connections(client: PgClient): Promise<PgConnection[]> {
  const { rows } = await client.query(
    `SELECT pid, application_name, host(client_addr) AS client_addr, state, wait_event_type, wait_event,
            (extract(epoch FROM backend_start) * 1000)::bigint AS since,
            (extract(epoch FROM xact_start) * 1000)::bigint AS xact
       FROM pg_stat_activity
      WHERE datname = current_database() AND application_name LIKE 'hearth:%'
        AND pid <> pg_backend_pid()
      ORDER BY backend_start, pid`,
  );
  return rows.map((r) => {
    const m = APP.exec(r.application_name);
    return {
      kind: m?.[1] ?? "unknown",
      pid: m ? Number(m[2]) : null,
      host: m?.[3] ?? null,
      applicationName: r.application_name,
      backendPid: r.pid,
      clientAddr: r.client_addr,
      state: r.state,
      since: iso(r.since),
      transactionSince: iso(r.xact),
      waitEvent: r.wait_event ? `${r.wait_event_type}:${r.wait_event}` : null,
    };
  });
}

async function advisory(client: PgClient): Promise<PgAdvisoryLock[]> {
  const { rows } = await client.query(
    `SELECT l.pid, a.application_name, l.classid::bigint AS classid, l.objid::bigint AS objid, l.mode, l.granted
       FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      ORDER BY l.granted DESC, l.pid`,
  );
  return rows.map((r) => {
    // Two-key advisory locks carry their keys as classid, objid (unsigned 32-bit).
    const key: [number, number] = [Number(r.classid), Number(r.objid)];
    return {
      backendPid: r.pid,
      applicationName: r.application_name,
      key,
      label: KNOWN_KEYS[`${key[0]}:${key[1]}`] ?? null,
      mode: r.mode,
      granted: r.granted,
    };
  });
}

async function waiting(client: PgClient): Promise<PgLockWait[]> {
  const { rows } = await client.query(
    `SELECT l.pid, a.application_name, l.locktype, l.relation::regclass::text AS relation, l.mode,
            pg_blocking_pids(l.pid) AS blocked_by,
            (extract(epoch FROM a.query_start) * 1000)::bigint AS since
       FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE NOT l.granted AND a.datname = current_database()
      ORDER BY a.query_start, l.pid`,
  );
  return rows.map((r) => ({
    backendPid: r.pid,
    applicationName: r.application_name,
    lockType: r.locktype,
    relation: r.relation,
    mode: r.mode,
    blockedBy: (r.blocked_by as number[]).map(Number),
    waitingSince: iso(r.since),
  }));
}

async function tables(client: PgClient): Promise<PgTableHealth[]> {
  const { rows } = await client.query(
    `SELECT relname, n_live_tup::bigint AS live, n_dead_tup::bigint AS dead,
            (extract(epoch FROM last_vacuum) * 1000)::bigint AS vac,
            (extract(epoch FROM last_autovacuum) * 1000)::bigint AS autovac
       FROM pg_stat_user_tables
      WHERE schemaname = current_schema() AND relname = ANY($1)
      ORDER BY relname`,
    [[...PG_TABLES, "hearth_schema"]],
  );
  return rows.map((r) => {
    const live = Number(r.live);
    const dead = Number(r.dead);
    return {
      table: r.relname,
      liveRows: live,
      deadRows: dead,
      deadRatio: live + dead === 0 ? 0 : Math.round((dead / (live + dead)) * 1000) / 1000,
      lastVacuum: iso(r.vac),
      lastAutovacuum: iso(r.autovac),
    };
  });
}

async function replication(client: PgClient, replica: boolean): Promise<PgReplication> {
  if (replica) {
    const { rows } = await client.query(
      `SELECT (extract(epoch FROM now() - pg_last_xact_replay_timestamp()) * 1000)::bigint AS lag`,
    );
    return { role: "replica", replicas: [], replayLagMs: num(rows[0]?.lag) };
  }
  const { rows } = await client.query(
    `SELECT application_name, host(client_addr) AS client_addr, state, sync_state,
            (extract(epoch FROM write_lag) * 1000)::bigint AS w,
            (extract(epoch FROM flush_lag) * 1000)::bigint AS f,
            (extract(epoch FROM replay_lag) * 1000)::bigint AS r
       FROM pg_stat_replication ORDER BY application_name`,
  );
  return {
    role: "primary",
    replicas: rows.map((r) => ({
      applicationName: r.application_name,
      clientAddr: r.client_addr,
      state: r.state,
      syncState: r.sync_state,
      writeLagMs: num(r.w),
      flushLagMs: num(r.f),
      replayLagMs: num(r.r),
    })),
    replayLagMs: null,
  };
}

async function counts(client: PgClient): Promise<PgView["counts"]> {
  const { rows } = await client.query(
    `SELECT (SELECT count(*) FROM sessions) AS sessions,
            count(*) AS messages, count(*) FILTER (WHERE active = 1) AS active
       FROM messages`,
  );
  const r = rows[0];
  return {
    sessions: Number(r.sessions),
    messages: Number(r.messages),
    activeMessages: Number(r.active),
    archivedMessages: Number(r.messages) - Number(r.active),
  };
}

/** A schema older than the hosts' table (or none) lists no hosts. */
async function hasHostsTable(client: PgClient): Promise<boolean> {
  const { rows } = await client.query("SELECT to_regclass('hearth_hosts') IS NOT NULL AS present");
  return rows[0]?.present === true;
}

/** archive_mode, archive_command and (PostgreSQL 15+) archive_library; null when the role may not read them. */
async function archiving(client: PgClient): Promise<PgView["archive"]> {
  try {
    const row = (
      await client.query(
        `SELECT current_setting('archive_mode') AS mode, current_setting('archive_command') AS command,
                current_setting('archive_library', true) AS library`,
      )
    ).rows[0];
    return { mode: row.mode, command: row.command ?? "", library: row.library || null };
  } catch {
    return null;
  }
}
