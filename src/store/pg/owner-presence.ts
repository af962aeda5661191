/**
 * "Handoff owner X is alive", held by the server (P2 on PostgreSQL): a
 * process that claims handoffs as X first takes a shared session-level
 * advisory lock on X, on a connection of its own that it keeps for as long
 * as it may own rows. The server releases the lock when that connection
 * ends, however the process ends (exit, kill -9, host lost once the server
 * sees the connection gone). Another host asks the lock, never a guess:
 * an owner whose lock it can take exclusively has nobody behind it.
 * Turn leases use it too (meta.ts: one owner per process start, held by
 * the store before it claims; ownersAlive asks about several at once).
 */
import pg from "pg";
import { storeClosed } from "../api.js";
import { applicationName, fromPgError, maskUrl, type PgClient } from "./pool.js";

/** The lock key of the owner in SQL expression `owner`, computed by the server (one hash for every host). */
const keyOf = (owner: string) => `hashtextextended('hearth:handoff-owner:' || ${owner}, 0)`;
const KEY = keyOf("$1");

export class OwnerPresence {
  private readonly held = new Map<string, Promise<pg.Client>>();
  /** Closed with its store: no connection is opened after (none would be ended). */
  private closed = false;

  /**
   * `connection`: how to reach the server, as the store's pool does (its
   * options: TLS, a caller's host, user and password); the URL alone
   * without it.
   */
  constructor(
    private readonly url: string,
    private readonly connection: pg.ClientConfig = { connectionString: url },
  ) {}

  /**
   * Hold `owner`'s lock (once per owner per instance) before claiming as it;
   * `then` runs on the holding connection (hearth_hosts' row is written there).
   */
  async hold(owner: string, then?: (client: pg.Client) => Promise<unknown>): Promise<void> {
    if (this.closed) throw storeClosed(maskUrl(this.url));
    let holding = this.held.get(owner);
    if (!holding) {
      holding = this.connect(owner);
      this.held.set(owner, holding);
      // A failed connect is forgotten: the next claim tries again.
      holding.catch(() => this.held.delete(owner));
      // So is a connection that ends (the server restarted, an admin ended
      // it): the lock went with it, and the next claim takes it again.
      const mine = holding;
      holding.then(
        (client) =>
          client.once("end", () => {
            if (this.held.get(owner) === mine) this.held.delete(owner);
          }),
        () => undefined,
      );
    }
    const client = await holding;
    if (then) {
      try {
        await then(client);
      } catch (err) {
        throw fromPgError(err, this.url, "announce this process");
      }
    }
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
    this.closed = true;
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

/**
 * ownerAlive for several owners in one round trip, inside a transaction on
 * `client`: owner -> whether some connection holds its presence. Each one
 * nobody holds stays locked exclusively until the transaction ends.
 */
export async function ownersAlive(
  client: PgClient,
  owners: Iterable<string>,
): Promise<Map<string, boolean>> {
  const all = [...new Set(owners)];
  // A name PostgreSQL text cannot hold (NUL) is nobody's lock: not alive.
  const alive = new Map(all.filter((o) => o.includes("\u0000")).map((o) => [o, false]));
  const list = all.filter((o) => !alive.has(o)).sort();
  if (list.length === 0) return alive;
  const { rows } = await client.query(
    `SELECT o, pg_try_advisory_xact_lock(${keyOf("o")}) AS free FROM unnest($1::text[]) AS o ORDER BY o`,
    [list],
  );
  for (const r of rows) alive.set(r.o as string, r.free !== true);
  return alive;
}
