/**
 * `hearth ps` on a PostgreSQL store: hearth's connections to the database
 * (from pg_stat_activity, on every host), the advisory locks they hold and
 * the lock waits between them, read back from the server.
 */

import type { PgSettings } from "../../config/pg.js";
import type { HostEntry } from "../../store/hosts.js";
import { maskUrl } from "../../store/pg/pool.js";
import { readView } from "./doctor.js";
import type { PgAdvisoryLock, PgConnection, PgLockWait } from "./view.js";

export interface PgPsReport {
  backend: "postgres";
  home: string;
  profile: string;
  url: string;
  server: { version: string; role: "primary" | "replica" };
  /** The gateways and dashboards of every host sharing the database, with their addresses. */
  hosts: HostEntry[];
  connections: PgConnection[];
  locks: { advisory: PgAdvisoryLock[]; waiting: PgLockWait[] };
}

export async function runPgPs(options: {
  home: string;
  profile: string;
  url: string;
  settings?: PgSettings;
}): Promise<PgPsReport> {
  const view = await readView(options.url, options.settings);
  return {
    backend: "postgres",
    home: options.home,
    profile: options.profile,
    url: maskUrl(options.url),
    server: { version: view.server.version, role: view.replication.role },
    hosts: view.hosts,
    connections: view.connections,
    locks: view.locks,
  };
}
