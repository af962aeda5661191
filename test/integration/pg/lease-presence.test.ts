/**
 * A gateway's death frees its turn leases at once on PostgreSQL, on any
 * host: a lease names its process's presence owner, whose session advisory
 * lock the server drops with the dead process's connection. The dying
 * gateway runs as another machine (its own hostname and boot id, one
 * database), where /proc cannot say anything about it, and its leases last
 * 10 minutes: only its presence can free the chat.
 */
import { hostname } from "node:os";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { type GatewayChild, startGateway, writeConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { type Machine, otherMachine, otherMachinesAvailable } from "../../helpers/machine.js";
import { freshPgDatabase, pgEnabled } from "../../helpers/pg.js";
import { until } from "../../helpers/process.js";

const running: GatewayChild[] = [];
const clients: pg.Client[] = [];
afterEach(async () => {
  for (const g of running.splice(0)) await g.kill("SIGKILL");
  for (const c of clients.splice(0)) await c.end();
});

/** 40 words, 500 ms apart: a turn that is still running when the test acts. */
const SLOW = {
  kind: "script",
  script: [{ content: Array.from({ length: 40 }, (_, i) => `w${i}`).join(" "), chunkDelayMs: 500 }],
};

async function gateway(url: string, responder: unknown, machine?: Machine) {
  const home = tempHome();
  writeConfig(home, {
    store: { url },
    gateway: { responder, leaseMs: 600_000, turnWaitMs: 100, compactAfterMessages: 100_000 },
  });
  const g = await startGateway(home, machine ? { machine } : {});
  running.push(g);
  return g;
}

async function connect(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  clients.push(c);
  return c;
}

/** The turn leases in the database. */
async function leases(db: pg.Client) {
  const { rows } = await db.query("SELECT value FROM meta WHERE key LIKE 'turn-lease:%'");
  return rows.map((r) => JSON.parse(r.value as string));
}

/** Presence locks (shared advisory locks) held by connections of the gateway with pid `pid`. */
async function presenceHeld(db: pg.Client, pid: number): Promise<number> {
  const { rows } = await db.query(
    `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE l.locktype = 'advisory' AND l.mode = 'ShareLock' AND l.granted
       AND a.application_name LIKE $1`,
    [`hearth:gateway:${pid}@%`],
  );
  return rows[0].n as number;
}

/**
 * Gateway `dying` (slow) holds a turn of chat c; `other` is refused (409,
 * Retry-After); `dying` is killed -9; `other` answers chat c, retrying its
 * 409s. Returns what `other` answered and how many times it was refused.
 */
async function killMidTurn(url: string, dying: GatewayChild, other: GatewayChild) {
  const db = await connect(url);
  const chat = { platform: "t", chat: "c" };
  void dying.post({ ...chat, content: "a slow turn", clientId: "d-1" }).catch(() => undefined);
  await until("the dying gateway's lease", async () => (await leases(db)).length === 1, 30_000);
  const [held] = await leases(db);
  expect(await presenceHeld(db, dying.pid)).toBeGreaterThan(0);

  const busy = await fetch(other.url("/v1/messages"), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ...chat, content: "while it lives", clientId: "o-0" }),
  });
  expect(busy.status).toBe(409);
  expect(busy.headers.get("retry-after")).toBe("1");
  expect(((await busy.json()) as { error: { code: string } }).error.code).toBe("HEARTH_TURN_BUSY");

  await dying.kill("SIGKILL");
  let refused = 0;
  let answer = await other.post({ ...chat, content: "after its death", clientId: "o-1" });
  const deadline = Date.now() + 30_000; // generous: the point is "not 10 minutes"
  while (answer.status === 409 && Date.now() < deadline) {
    refused++;
    await new Promise((r) => setTimeout(r, 100));
    answer = await other.post({ ...chat, content: "after its death", clientId: "o-1" });
  }
  expect(answer.status).toBe(200);
  // Freed by the owner's vanished presence, not by expiry: the lease had 10 minutes left.
  expect(await presenceHeld(db, dying.pid)).toBe(0);
  expect(held.expiresAt).toBeGreaterThan(Date.now() + 60_000);
  // Nothing acknowledged is lost: the answer and its message are stored.
  const { rows } = await db.query("SELECT id FROM messages WHERE id = ANY($1::bigint[])", [
    [answer.body.message.id, answer.body.reply.id],
  ]);
  expect(rows).toHaveLength(2);
  expect(await leases(db)).toHaveLength(0); // the answering turn released its lease
  return { held, answer, refused };
}

describe.skipIf(!pgEnabled || !otherMachinesAvailable)("turn leases and host death", () => {
  it("kill -9 of a gateway on another machine mid-turn: the chat answers on this one", async () => {
    const url = await freshPgDatabase();
    const machine = otherMachine();
    const dying = await gateway(url, SLOW, machine);
    const other = await gateway(url, { kind: "echo" });
    const { held, answer } = await killMidTurn(url, dying, other);
    expect(held.host).toContain(`${machine.hostname}/`);
    expect(held.holder.bootId).toBe(machine.bootId);
    expect(answer.body.reply.content).toContain("after its death");
  }, 120_000);

  it("a clone (same hostname and machine id, its own boot): alive until killed, then free", async () => {
    const url = await freshPgDatabase();
    const clone = otherMachine(hostname());
    const dying = await gateway(url, SLOW, clone);
    const other = await gateway(url, { kind: "echo" });
    // The clone's lease says this host: /proc here would call its holder dead (another boot id).
    const { held } = await killMidTurn(url, dying, other);
    expect(held.host.split("/")[0]).toBe(hostname());
    expect(held.holder.bootId).toBe(clone.bootId);
  }, 120_000);
});

if (pgEnabled && !otherMachinesAvailable)
  console.warn("unshare cannot make user/UTS/mount namespaces here: host-death tests skipped");
