/**
 * Single-flight refresh across hosts (D6): two gateways (two homes, one
 * PostgreSQL database) receive the same refresh token, at once and a bit
 * later inside gateway.refreshGraceMs. Both answer the same new pair and the
 * family stands; after the window the old token is a replay and revokes it.
 */
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../../helpers/cli.js";
import {
  type ApiResponse,
  type GatewayChild,
  startGateway,
  writeConfig,
} from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { freshPgDatabase, pgEnabled } from "../../helpers/pg.js";

const GRACE_MS = 3000;

interface Pair {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  familyId: string;
}

const running: GatewayChild[] = [];
afterEach(async () => {
  for (const g of running.splice(0)) await g.kill("SIGKILL");
});

function homeOn(url: string): string {
  const home = tempHome();
  writeConfig(home, {
    store: { url },
    gateway: { requireAuth: true, refreshGraceMs: GRACE_MS, compactAfterMessages: 100_000 },
  });
  return home;
}

async function post(
  gw: GatewayChild,
  path: string,
  body: unknown,
  token?: string,
): Promise<ApiResponse> {
  const res = await fetch(gw.url(path), {
    method: body === undefined ? "GET" : "POST",
    headers: {
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json() };
}

const refresh = (gw: GatewayChild, refreshToken: string) =>
  post(gw, "/v1/auth/refresh", { refreshToken });
const sessions = (gw: GatewayChild, accessToken: string) =>
  post(gw, "/v1/sessions", undefined, accessToken);

/** `hearth token create` in one home, redeemed on a gateway: the family's first pair. */
async function pairOn(home: string, gw: GatewayChild): Promise<Pair> {
  const created = await runCli(["--json", "token", "create"], { home });
  expect(created.code, created.stderr).toBe(0);
  const paired = await post(gw, "/v1/auth/pair", { code: created.json<{ code: string }>().code });
  expect(paired.status).toBe(200);
  return paired.body as Pair;
}

async function familyState(url: string, familyId: string) {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const family = await db.query(
      "SELECT revoked_at, revoked_reason FROM auth_families WHERE id = $1",
      [familyId],
    );
    const rotations = await db.query(
      "SELECT count(*)::int AS n FROM auth_tokens WHERE family_id = $1 AND kind = 'refresh' AND used_at IS NOT NULL",
      [familyId],
    );
    const sealed = await db.query("SELECT hash, sealed FROM auth_rotations");
    return {
      revoked: family.rows[0]?.revoked_at !== null,
      reason: family.rows[0]?.revoked_reason as string | null,
      rotations: rotations.rows[0]?.n as number,
      sealed: sealed.rows as { hash: string; sealed: Buffer }[],
    };
  } finally {
    await db.end();
  }
}

describe.skipIf(!pgEnabled)("refresh across gateways on PostgreSQL (D6)", () => {
  it("two gateways get the same token at once and a bit later: one rotation, one pair, the family stands; after the window it is a replay", async () => {
    const url = await freshPgDatabase();
    const homeA = homeOn(url);
    const [a, b] = await Promise.all([startGateway(homeA), startGateway(homeOn(url))]);
    running.push(a!, b!);

    // Sequential: A rotates, then B (which never saw the token) is asked for it.
    const p0 = await pairOn(homeA, a!);
    const first = await refresh(a!, p0.refreshToken);
    expect(first.status).toBe(200);
    const rotatedAt = Date.now();
    const p1 = first.body as Pair;
    expect(p1.familyId).toBe(p0.familyId);
    expect(p1.refreshToken).not.toBe(p0.refreshToken);
    const onB = await refresh(b!, p0.refreshToken);
    expect(onB, JSON.stringify(onB.body)).toEqual({ status: 200, body: p1 });
    expect(await refresh(b!, p0.refreshToken)).toEqual({ status: 200, body: p1 });

    // At once: 4 presenters on each gateway, the same token.
    const q0 = await pairOn(homeA, a!);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => refresh(i % 2 ? b! : a!, q0.refreshToken)),
    );
    expect(answers.map((x) => x.status)).toEqual(Array(8).fill(200));
    const q1 = answers[0]!.body as Pair;
    for (const x of answers) expect(x.body).toEqual(q1);
    // And a bit later, still inside the window, on both.
    expect(await refresh(b!, q0.refreshToken)).toEqual({ status: 200, body: q1 });
    expect(await refresh(a!, q0.refreshToken)).toEqual({ status: 200, body: q1 });

    for (const [p, next] of [
      [p0, p1],
      [q0, q1],
    ] as const) {
      const state = await familyState(url, p.familyId);
      expect(state).toMatchObject({ revoked: false, rotations: 1 });
      // The new pair works on either gateway.
      expect((await sessions(a!, next.accessToken)).status).toBe(200);
      expect((await sessions(b!, next.accessToken)).status).toBe(200);
    }
    // The database holds the rotated tokens' hashes and ciphertext, no token in clear.
    const { sealed } = await familyState(url, p0.familyId);
    expect(sealed.length).toBe(2);
    const dump = JSON.stringify(sealed.map((r) => [r.hash, r.sealed.toString("latin1")]));
    for (const secret of [p0, p1, q0, q1].flatMap((p) => [p.accessToken, p.refreshToken]))
      expect(dump).not.toContain(secret);

    // A real wait: what is under test is the end of p0's grace window.
    await new Promise((r) => setTimeout(r, Math.max(0, rotatedAt + GRACE_MS + 250 - Date.now())));
    const replay = await refresh(b!, p0.refreshToken);
    expect(replay.status).toBe(401);
    expect(replay.body.error.code).toBe("HEARTH_UNAUTHORIZED");
    const after = await familyState(url, p0.familyId);
    expect(after).toMatchObject({ revoked: true, rotations: 1 });
    expect(after.reason).toMatch(/presented again/);
    expect((await sessions(a!, p1.accessToken)).status).toBe(401);
    expect((await refresh(a!, p1.refreshToken)).status).toBe(401);
    // The other family stands.
    expect((await sessions(a!, q1.accessToken)).status).toBe(200);
  });
});
