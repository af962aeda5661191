import { hostname } from "node:os";
import { nodeCrypto } from "../builtins.js";

/**
 * The long-lived processes of every host sharing a store (gateways,
 * dashboards) and where they answer, backend-neutral. On PostgreSQL each
 * announces itself in hearth_hosts and holds its presence (a session-level
 * advisory lock, ./pg/owner-presence.ts) for as long as it lives; a row is
 * listed only while the server says its lock is held, never from a local
 * pid. On SQLite (one host) nothing is announced: `hearth ps` reads the
 * local processes. The statements are pg/hosts.ts and sqlite/hosts.ts.
 */
export interface HostEntry {
  /** The presence owner (`host:<uuid>`, new at every start). */
  id: string;
  kind: "gateway" | "dashboard";
  /** The machine's host name. */
  host: string;
  /** Where it answers (http://…). */
  address: string;
  pid: number;
  startedAt: number;
}

export interface HostsSql {
  /** Insert or refresh the row, holding its presence for as long as the store is open. */
  announce(entry: HostEntry): Promise<void>;
  /** The rows whose presence some connection (on any host) holds. */
  live(): Promise<HostEntry[]>;
}

export class Hosts {
  constructor(private readonly sql: HostsSql) {}

  /** Announce this process (its kind and address) to every host of the store. */
  async announce(kind: HostEntry["kind"], address: string): Promise<HostEntry> {
    const entry: HostEntry = {
      id: `host:${nodeCrypto().randomUUID()}`,
      kind,
      host: hostname(),
      address,
      pid: process.pid,
      startedAt: Date.now(),
    };
    await this.sql.announce(entry);
    return entry;
  }

  /** Every live gateway and dashboard of the store, on every host. */
  live(): Promise<HostEntry[]> {
    return this.sql.live();
  }
}
