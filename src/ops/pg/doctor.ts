/**
 * `hearth doctor` and `hearth ps` on a PostgreSQL store (store.url): the
 * PG view read back from the server, judged into findings. Read-only (M1).
 * A server that cannot be reached or refuses the login is a finding with
 * its code (status error, exit 4), not a crash: doctor tells the truth.
 */

import { loadConfigLazily } from "../../config/load-lazily.js";
import type { PgSettings } from "../../config/pg.js";
import { isHearthError } from "../../errors.js";
import { toHearthError } from "../../sqlite-errors.js";
import { createPool, fromPgError, maskUrl } from "../../store/pg/pool.js";
import type { McpProbe } from "../../turn/tools/mcp/probe.js";
import { type Finding, type Severity, worst } from "../doctor/finding.js";
import { mcpFindings } from "../doctor/mcp.js";
import { type PgView, readPgView } from "./view.js";

/** A table whose dead rows pass both marks is worth a VACUUM. */
const BLOAT_MIN_DEAD = 1000;
const BLOAT_RATIO = 0.2;
/** Replication lag above this is a warning. */
const LAG_WARN_MS = 60_000;

export interface PgDoctorReport {
  backend: "postgres";
  home: string;
  profile: string;
  /** The database, password masked. */
  url: string;
  findings: Finding[];
  status: Severity;
  /** Null when the server could not be read (see findings). */
  pg: PgView | null;
  /** The profile's MCP servers, each started, listed and stopped (when any is configured). */
  mcpServers?: McpProbe[];
}

export async function readView(url: string, settings?: PgSettings): Promise<PgView> {
  const pool = createPool(url, { max: 1, kind: "cli", ...(settings ? { settings } : {}) });
  try {
    const client = await pool.connect().catch((err) => {
      throw fromPgError(err, url, "connect");
    });
    try {
      await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
      const view = await readPgView(client, url);
      await client.query("COMMIT");
      return view;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {});
      throw fromPgError(err, url, "read the server's state");
    } finally {
      client.release();
    }
  } finally {
    await pool.end();
  }
}

export async function runPgDoctor(options: {
  home: string;
  profile: string;
  url: string;
  settings?: PgSettings;
}): Promise<PgDoctorReport> {
  const base = {
    backend: "postgres" as const,
    home: options.home,
    profile: options.profile,
    url: maskUrl(options.url),
  };
  // The profile's MCP servers, as on SQLite (the configuration named this backend, so it loads).
  const mcp = await mcpFindings(await loadConfigLazily({ home: options.home }), options.profile);
  const more = mcp.servers ? { mcpServers: mcp.servers } : {};
  let view: PgView;
  try {
    view = await readView(options.url, options.settings);
  } catch (err) {
    if (!isHearthError(err)) throw err;
    const e = toHearthError(err);
    const findings: Finding[] = [
      {
        code:
          e.code === "HEARTH_PG_AUTH"
            ? "pg.auth"
            : e.code === "HEARTH_PG_TOO_MANY_CONNECTIONS"
              ? "pg.too-many-connections"
              : "pg.unreachable",
        severity: "error",
        message: `${e.code}: ${e.message}`,
        ...(e.hint ? { fix: e.hint } : {}),
      },
      ...mcp.findings,
    ];
    return { ...base, ...more, findings, status: "error", pg: null };
  }
  const findings = [...judge(view, base.url), ...mcp.findings];
  return { ...base, ...more, findings, status: worst(findings), pg: view };
}

/** A copy still running (its lock held) is a warning; one nobody runs was interrupted: an error. */
function copyFinding(view: PgView): Finding {
  const copy = view.copy!;
  const running = view.locks.advisory.some((l) => l.label === "migrate --to copy" && l.granted);
  const since =
    copy.startedAt === null ? "" : ` (started ${new Date(copy.startedAt).toISOString()})`;
  return running
    ? {
        code: "pg.migrate-copy",
        severity: "warning",
        message: `a hearth migrate --to copy of ${copy.source} is running${since}; writers refuse the database until it is verified`,
      }
    : {
        code: "pg.migrate-interrupted",
        severity: "error",
        message: `an interrupted hearth migrate --to copy of ${copy.source}${since}: the database holds part of it, and writers refuse it (HEARTH_MIGRATION_INCOMPLETE)`,
        fix: "run the same hearth migrate --to command again (it resumes), or with --force to copy from scratch",
      };
}

export function judge(view: PgView, url: string): Finding[] {
  const findings: Finding[] = [
    {
      code: "pg.server",
      severity: "ok",
      message: `PostgreSQL ${view.server.version} (${view.replication.role}), database ${view.server.database} as ${view.server.user} at ${url}`,
    },
  ];
  const { version, latest } = view.schema;
  if (version === null)
    findings.push({
      code: "pg.schema",
      severity: "warning",
      message: "the database holds no hearth schema yet",
      fix: "hearth migrate --to <url> (copy a SQLite store), or start a hearth process with store.url set",
    });
  else if (version > latest)
    findings.push({
      code: "pg.schema",
      severity: "error",
      message: `schema version ${version} is newer than this hearth knows (${latest})`,
      fix: "upgrade hearth on this host",
    });
  else
    findings.push({
      code: "pg.schema",
      severity: version === latest ? "ok" : "warning",
      message: `schema version ${version} (this hearth: ${latest})`,
      ...(version === latest ? {} : { fix: "start a hearth writer (gateway) to migrate it" }),
    });
  const usable = view.slots.max - view.slots.reserved;
  const full = view.slots.used >= usable * 0.9;
  findings.push({
    code: "pg.connection-slots",
    severity: full ? "warning" : "ok",
    message: `${view.slots.used} of ${usable} connection slots in use on the server (max_connections ${view.slots.max}, ${view.slots.reserved} reserved for superusers)`,
    ...(full
      ? {
          fix: "each hearth process opens up to store.pg.pool.max connections: lower it, raise max_connections, or pool with PgBouncer in session mode (docs/postgres.md)",
        }
      : {}),
  });
  if (view.copy) findings.push(copyFinding(view));
  findings.push({
    code: "pg.connections",
    severity: "info",
    message: `${view.connections.length} hearth connection(s): ${
      view.connections.map((c) => `${c.kind} pid ${c.pid ?? "?"}@${c.host ?? "?"}`).join(", ") ||
      "none"
    }`,
  });
  for (const w of view.locks.waiting)
    findings.push({
      code: "pg.lock-wait",
      severity: "warning",
      message: `${w.applicationName || "(no application_name)"} (backend ${w.backendPid}) waits for a ${w.lockType} lock${w.relation ? ` on ${w.relation}` : ""} held by backend(s) ${w.blockedBy.join(", ") || "?"} since ${w.waitingSince ?? "?"}`,
      fix: "hearth ps shows the holders; a stuck one can be ended with pg_terminate_backend(<backend>)",
    });
  for (const t of view.tables) {
    if (t.deadRows < BLOAT_MIN_DEAD || t.deadRatio < BLOAT_RATIO) continue;
    findings.push({
      code: "pg.bloat",
      severity: "warning",
      message: `${t.table}: about ${t.deadRows} dead rows beside ${t.liveRows} live (${Math.round(t.deadRatio * 100)}%); autovacuum last ran ${t.lastAutovacuum ?? "never"}`,
      fix: `VACUUM (ANALYZE) ${t.table}  (psql; or check autovacuum settings)`,
    });
  }
  const lags = [
    ...view.replication.replicas.map((r) => ({
      who: `replica ${r.applicationName || r.clientAddr}`,
      ms: r.replayLagMs,
    })),
    ...(view.replication.role === "replica"
      ? [{ who: "this replica", ms: view.replication.replayLagMs }]
      : []),
  ];
  for (const l of lags)
    findings.push({
      code: "pg.replication",
      severity: l.ms !== null && l.ms > LAG_WARN_MS ? "warning" : "info",
      message: `${l.who}: replay lag ${l.ms === null ? "unknown" : `${l.ms} ms`}`,
    });
  findings.push(archiveFinding(view.archive));
  if (view.counts)
    findings.push({
      code: "pg.counts",
      severity: "ok",
      message: `sessions: ${view.counts.sessions}, messages: ${view.counts.messages} (${view.counts.activeMessages} live, ${view.counts.archivedMessages} history)`,
    });
  return findings;
}

/**
 * Whether PostgreSQL archives its WAL (its own continuous copy off the
 * host, the base of point-in-time recovery; hearth's replication is for
 * SQLite stores): reported, not judged, since a managed service archives
 * without saying so here (docs/postgres.md#point-in-time-recovery).
 */
function archiveFinding(archive: PgView["archive"]): Finding {
  if (!archive)
    return {
      code: "pg.archive",
      severity: "info",
      message: "WAL archiving: archive_mode cannot be read by this role",
    };
  const on = archive.mode !== "off" && (archive.command !== "" || archive.library !== null);
  return {
    code: "pg.archive",
    severity: "info",
    message: on
      ? `WAL archiving on (archive_mode ${archive.mode}, ${archive.library ? `archive_library ${archive.library}` : `archive_command ${archive.command}`}): point-in-time recovery is possible from the archive`
      : `WAL archiving off (archive_mode ${archive.mode}${archive.mode !== "off" ? ", no archive_command" : ""}): no point-in-time recovery beyond hearth backup's pg_dump copies`,
    ...(on
      ? {}
      : {
          fix: "set archive_mode and archive_command (or use pgBackRest / WAL-G); docs/postgres.md#point-in-time-recovery",
        }),
  };
}
