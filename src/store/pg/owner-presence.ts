/**
 * "Handoff owner X is alive", held by the server (P2 on PostgreSQL): a
 * process that claims handoffs as X first takes a shared session-level
 * advisory lock on X, on a connection of its own that it keeps for as long
 * as it may own rows. The server releases the lock when that connection
 * ends, however the process ends (exit, kill -9, host lost once the server
 * sees the connection gone). Another host asks the lock, never a guess:
 * an owner whose lock it can take exclusively has nobody behind it.
 */
import pg from "pg";
import { applicationName, fromPgError, type PgClient } from "./pool.js";

/** The lock key of an owner, computed by the server (one hash for every host). */
const KEY = "hashtextextended('hearth:handoff-owner:' || $1, 0)";

export class OwnerPresence {
  private readonly held = new Map<string, Promise<pg.Client>>();

  /**
   * `connection`: how to reach the server, as the store's pool does (its
   * options: TLS, a caller's host, user and password); the URL alone
   * without it.
   */
  constructor(
    private readonly url: string,
    private readonly connection: pg.ClientConfig = { connectionString: url },
  ) {}

  /** Hold `owner`'s lock (once per owner per instance) before claiming as it. */
  async hold(owner: string): Promise<void> {
    let holding = this.held.get(owner);
    if (!holding) {
      holding = this.connect(owner);
      this.held.set(owner, holding);
      // A failed connect is forgotten: the next claim tries again.
      holding.catch(() => this.held.delete(owner));
    }
    await holding;
  }

  private async connect(owner: string): Promise<pg.Client> {
    const { password } = this.connection;
    const client = new pg.Client({
      ...this.connection,
      // A pool keeps its password out of a spread (not enumerable).
      ...(password === undefined ? {} : { password }),
      application_name: applicationName(),
      connectionTimeoutMillis: 10_000,
    });
    // Lost connection, lost lock: forget it so the next claim takes it again.
    client.on("error", () => {
      this.held.delete(owner);
      void client.end().catch(() => undefined);
    });
    try {
      await client.connect();
      await client.query(`SELECT pg_advisory_lock_shared(${KEY})`, [owner]);
      return client;
    } catch (err) {
      void client.end().catch(() => undefined);
      throw fromPgError(err, this.url, "hold a handoff owner's presence");
    }
  }

  /** Release every owner this instance holds (the store closes). */
  async close(): Promise<void> {
    const clients = await Promise.allSettled([...this.held.values()]);
    this.held.clear();
    await Promise.all(
      clients.map((c) => (c.status === "fulfilled" ? c.value.end().catch(() => undefined) : null)),
    );
  }
}

/**
 * Inside a transaction on `client`: true when some connection (on any
 * host) holds `owner`'s presence. The probe takes the lock exclusively for
 * the rest of the transaction when nobody holds it, so the owner cannot
 * start claiming meanwhile.
 */
export async function ownerAlive(client: PgClient, owner: string): Promise<boolean> {
  const { rows } = await client.query(`SELECT pg_try_advisory_xact_lock(${KEY}) AS free`, [owner]);
  return rows[0]?.free !== true;
}
