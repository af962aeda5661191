import type { HostEntry, HostsSql } from "../hosts.js";
import { int } from "./convert.js";
import { type OwnerPresence, ownersAlive } from "./owner-presence.js";
import type { PgClient, PgDb } from "./pool.js";

/**
 * hearth_hosts on PostgreSQL: the row is written on the presence connection
 * itself (never read-only, so a dashboard's read-only store announces too),
 * and listed only while some connection holds its owner's lock.
 */
export class PgHosts implements HostsSql {
  constructor(
    private readonly db: PgDb,
    private readonly presence: OwnerPresence,
  ) {}

  /** Rows of processes whose presence nobody holds any more are deleted in the same transaction. */
  async announce(e: HostEntry): Promise<void> {
    await this.presence.hold(e.id, async (client) => {
      await client.query("BEGIN");
      try {
        const { rows } = await client.query("SELECT id FROM hearth_hosts");
        const alive = await ownersAlive(
          client as PgClient,
          rows.map((r) => r.id as string),
        );
        const gone = [...alive].filter(([, live]) => !live).map(([id]) => id);
        if (gone.length > 0)
          await client.query("DELETE FROM hearth_hosts WHERE id = ANY($1)", [gone]);
        await client.query(
          `INSERT INTO hearth_hosts (id, kind, host, address, pid, started_at) VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (id) DO UPDATE SET address = excluded.address`,
          [e.id, e.kind, e.host, e.address, e.pid, e.startedAt],
        );
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw err;
      }
    });
  }

  async live(): Promise<HostEntry[]> {
    return this.db.transaction("list the hosts", (client) => liveHosts(client));
  }
}

/** Inside a transaction: the announced rows whose presence is held, oldest first. */
export async function liveHosts(client: PgClient): Promise<HostEntry[]> {
  const { rows } = await client.query(
    "SELECT id, kind, host, address, pid, started_at FROM hearth_hosts ORDER BY started_at, id",
  );
  const alive = await ownersAlive(
    client,
    rows.map((r) => r.id as string),
  );
  return rows
    .filter((r) => alive.get(r.id as string) === true)
    .map((r) => ({
      id: r.id as string,
      kind: r.kind as HostEntry["kind"],
      host: r.host as string,
      address: r.address as string,
      pid: int(r.pid),
      startedAt: int(r.started_at),
    }));
}
