/**
 * Several gateways on one PostgreSQL database: one per home (a host), all
 * serving one profile under client load; kill -9 of one loses nothing that
 * was acknowledged, and no turn runs twice.
 */
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import {
  type GatewayChild,
  spawnGateway,
  startGateway,
  writeConfig,
} from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { freshPgDatabase, pgEnabled } from "../../helpers/pg.js";

const running: GatewayChild[] = [];
afterEach(async () => {
  for (const g of running.splice(0)) await g.kill("SIGKILL");
});

function homeOn(url: string): string {
  const home = tempHome();
  writeConfig(home, { store: { url }, gateway: { compactAfterMessages: 100_000 } });
  return home;
}

describe.skipIf(!pgEnabled)("gateways on PostgreSQL", () => {
  it("runs one gateway per home: a second in the same home is refused, another home starts", async () => {
    const url = await freshPgDatabase();
    const home = homeOn(url);
    const first = await startGateway(home);
    running.push(first);
    const second = spawnGateway(home);
    running.push(second);
    const exit = await second.exited;
    expect(exit.code).toBe(78); // HEARTH_GATEWAY_RUNNING: a restart cannot fix it
    expect(second.stderr).toContain(`another gateway already serves profile default from ${home}`);
    const other = await startGateway(homeOn(url));
    running.push(other);
    const res = await other.post({ platform: "t", chat: "c", content: "hello", clientId: "x-1" });
    expect(res.status).toBe(200);
  });

  it("three gateways under client load, one killed -9: every acknowledged message is stored once, no turn twice", async () => {
    const url = await freshPgDatabase();
    const gateways = await Promise.all([1, 2, 3].map(() => startGateway(homeOn(url))));
    running.push(...gateways);
    const clients = 12;
    const turns = 8;
    const acked: { clientId: string; message: number; reply: number }[] = [];
    const failures: string[] = [];
    const victim = gateways[2]!;
    let killed = false;
    await Promise.all(
      Array.from({ length: clients }, async (_, c) => {
        for (let n = 0; n < turns; n++) {
          const clientId = `${c}-${n}`;
          // A client retries an unacknowledged message, with its clientId, on the next gateway.
          for (let attempt = 0; attempt < 6; attempt++) {
            const gw = gateways[(c + n + attempt) % 3]!;
            if (gw === victim && killed) continue;
            try {
              const res = await gw.post({
                platform: "load",
                chat: `chat-${c}`,
                content: `m ${clientId}`,
                clientId,
              });
              if (res.status === 200) {
                acked.push({ clientId, message: res.body.message.id, reply: res.body.reply.id });
                break;
              }
              failures.push(`${res.status} ${res.body.error?.code}`);
            } catch (err) {
              failures.push(String(err));
            }
          }
          if (c === 0 && n === 2 && !killed) {
            killed = true;
            await victim.kill("SIGKILL");
          }
        }
      }),
    );
    expect(killed).toBe(true);
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      const { rows } = await db.query(
        "SELECT id, role, client_id, session_id, ordinal FROM messages ORDER BY session_id, ordinal",
      );
      const ids = new Set(rows.map((r) => Number(r.id)));
      for (const a of acked) {
        expect(ids.has(a.message)).toBe(true);
        expect(ids.has(a.reply)).toBe(true);
      }
      // Each acknowledged client message is stored once, and answered once (no turn ran twice).
      const users = rows.filter((r) => r.role === "user");
      const byClientId = new Map<string, number>();
      for (const u of users) byClientId.set(u.client_id, (byClientId.get(u.client_id) ?? 0) + 1);
      for (const a of acked) expect(byClientId.get(a.clientId)).toBe(1);
      const perSession = new Map<string, string[]>();
      for (const r of rows)
        perSession.set(r.session_id, [...(perSession.get(r.session_id) ?? []), r.role]);
      for (const roles of perSession.values())
        expect(roles.filter((r) => r !== "user").length).toBeLessThanOrEqual(
          roles.filter((r) => r === "user").length,
        );
      expect(acked.length).toBeGreaterThan(clients * turns * 0.9);
    } finally {
      await db.end();
    }
  });
});
