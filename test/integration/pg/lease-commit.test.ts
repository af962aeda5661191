/**
 * A claim of a turn lease whose COMMIT landed but whose reply was lost (the
 * connection dropped at that instant) never leaves the chat stuck: the
 * gateway reads the lease back, gives it up since it is its own turn's, and
 * the client's retry (same clientId) is answered, with the message stored
 * once. Leases last 10 minutes here: only that release can free the chat.
 * Also: backends of a gateway's data connections ended by the server
 * (pg_terminate_backend) while turns claim leases leave no chat stuck and
 * lose nothing acknowledged.
 */
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ApiResponse,
  type GatewayChild,
  startGateway,
  writeConfig,
} from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { freshPgDatabase, pgEnabled } from "../../helpers/pg.js";
import { type PgProxy, startPgProxy } from "../../helpers/pg-proxy.js";

const running: GatewayChild[] = [];
const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const g of running.splice(0)) await g.kill("SIGKILL");
  for (const c of closing.splice(0)) await c();
});

async function gatewayOn(url: string): Promise<GatewayChild> {
  const home = tempHome();
  writeConfig(home, {
    store: { url },
    gateway: { leaseMs: 600_000, turnWaitMs: 100, compactAfterMessages: 100_000 },
  });
  const g = await startGateway(home);
  running.push(g);
  return g;
}

async function connect(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  closing.push(() => c.end());
  return c;
}

async function proxyTo(url: string): Promise<PgProxy> {
  const proxy = await startPgProxy(url);
  closing.push(() => proxy.close());
  return proxy;
}

async function storedTimes(db: pg.Client, clientId: string): Promise<number> {
  const { rows } = await db.query("SELECT count(*)::int AS n FROM messages WHERE client_id = $1", [
    clientId,
  ]);
  return rows[0].n as number;
}

describe.skipIf(!pgEnabled)("turn lease claims whose commit outcome is unknown", () => {
  it("a claim's COMMIT lands but its reply is lost: the retry is answered, the message stored once", async () => {
    const url = await freshPgDatabase();
    const proxy = await proxyTo(url);
    const gateway = await gatewayOn(proxy.url);
    const db = await connect(url);
    const chat = { platform: "t", chat: "c" };
    expect((await gateway.post({ ...chat, content: "first", clientId: "m-0" })).status).toBe(200);

    proxy.loseNextCommit({ statement: "INSERT INTO meta", parameter: "turn-lease:" });
    const lost = await gateway.post({ ...chat, content: "lost reply", clientId: "m-1" });
    expect(proxy.cuts).toBe(1);
    expect(lost.status).toBeGreaterThanOrEqual(500);
    // The claim landed: the message is stored although the gateway was told otherwise.
    expect(await storedTimes(db, "m-1")).toBe(1);

    const retry = await gateway.post({ ...chat, content: "lost reply", clientId: "m-1" });
    expect(retry.status).toBe(200);
    expect(retry.body.reply.content).toContain("lost reply");
    expect(await storedTimes(db, "m-1")).toBe(1);
    const { rows } = await db.query(
      "SELECT count(*)::int AS n FROM meta WHERE key LIKE 'turn-lease:%'",
    );
    expect(rows[0].n).toBe(0);
  });

  it("the server ends a gateway's data connections while turns claim: no chat stuck, nothing acknowledged lost", async () => {
    const url = await freshPgDatabase();
    const gateway = await gatewayOn(url);
    const db = await connect(url);
    const chats = 6;
    const turns = 10;
    // The killer ends this many connections (or stops after 30 s), then
    // lets the chats finish. Its cuts are what refuse a message (503); the cap
    // keeps the retries they cause from growing with how slow the host is.
    const kills = 150;
    const killUntil = Date.now() + 30_000;
    let stop = false;
    let terminated = 0;
    let killerEndedAt: number | undefined;
    // Every 20 ms, one busy connection of the gateway, never the one holding its presence
    // (a shared advisory lock): mostly inside a transaction, sometimes at its COMMIT.
    const killer = (async () => {
      try {
        while (!stop && terminated < kills && Date.now() < killUntil) {
          const { rows } = await db.query(
            `SELECT pg_terminate_backend(a.pid) AS ok FROM pg_stat_activity a
             WHERE a.application_name LIKE $1 AND a.pid <> pg_backend_pid() AND a.state <> 'idle'
               AND NOT EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid
                               AND l.locktype = 'advisory' AND l.mode = 'ShareLock')
             LIMIT 1`,
            [`hearth:gateway:${gateway.pid}@%`],
          );
          terminated += rows.filter((r) => r.ok).length;
          await new Promise((r) => setTimeout(r, 20));
        }
      } finally {
        killerEndedAt = Date.now();
      }
    })();
    // Once the killer is done, nothing refuses a message but a chat held by a
    // turn that is not running (leases last 10 minutes here). A lease whose
    // release failed is retried in the background at most 2 s apart: 10 s
    // after the last cut, every chat must answer.
    const settleMs = 10_000;
    const acked: ApiResponse[] = [];
    const stuck: string[] = [];
    // Each chat sends `turns` messages, and goes on until the killer has ended a
    // connection at least once (fewer round trips per turn leave it fewer chances).
    let sent = 0;
    try {
      await Promise.all(
        Array.from({ length: chats }, async (_, c) => {
          for (let n = 0; n < turns || (terminated === 0 && n < 500); n++) {
            sent++;
            const body = {
              platform: "t",
              chat: `c${c}`,
              content: `m ${c}-${n}`,
              clientId: `${c}-${n}`,
            };
            // A client retries what was not acknowledged, with its clientId, until it is.
            for (;;) {
              const res = await gateway.post(body);
              if (res.status === 200) {
                acked.push(res);
                break;
              }
              if (killerEndedAt !== undefined && Date.now() - killerEndedAt > settleMs) {
                stuck.push(
                  `${body.clientId}: ${res.status} ${res.body.error?.code} ${res.body.error?.message}`,
                );
                return;
              }
              await new Promise((r) => setTimeout(r, 20));
            }
          }
        }),
      );
    } finally {
      // Also when a post fails (a gateway that died): the killer must not
      // outlive the test and query on a client that is closed by then.
      stop = true;
      await killer;
    }
    expect(terminated).toBeGreaterThan(0);
    // Every message was answered in the end: no chat was left held by a turn that is not running.
    expect(stuck).toEqual([]);
    expect(sent).toBeGreaterThanOrEqual(chats * turns);
    expect(acked).toHaveLength(sent);
    for (let c = 0; c < chats; c++) {
      const res = await gateway.post({
        platform: "t",
        chat: `c${c}`,
        content: "after",
        clientId: `${c}-z`,
      });
      expect(res.status).toBe(200);
    }
    // Nothing acknowledged is lost, and each message is stored once.
    const ids = acked.flatMap((r) => [r.body.message.id, r.body.reply.id]);
    const { rows } = await db.query(
      "SELECT count(*)::int AS n FROM messages WHERE id = ANY($1::bigint[])",
      [ids],
    );
    expect(rows[0].n).toBe(ids.length);
    const users = await db.query("SELECT count(*)::int AS n FROM messages WHERE role = 'user'");
    expect(users.rows[0].n).toBe(sent + chats);
  }, 120_000);
});
