import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { runCli } from "../../helpers/cli.js";
import {
  type ApiResponse,
  type GatewayChild,
  startGateway,
  withStore,
  writeConfig,
} from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";

const GRACE_MS = 1500;

/** `hearth --json <args>`, which must succeed; its parsed output. */
async function hearthJson<T>(home: string, ...args: string[]): Promise<T> {
  const r = await runCli(["--json", ...args], { home });
  expect(r.code, r.stderr).toBe(0);
  return r.json<T>();
}

const tokenCreate = (home: string) =>
  hearthJson<{ code: string; familyId: string; expiresAt: string }>(home, "token", "create");

async function call(
  gw: GatewayChild,
  path: string,
  init: { body?: unknown; token?: string } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = {};
  if (init.body !== undefined) headers["content-type"] = "application/json";
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  const res = await fetch(gw.url(path), {
    method: init.body === undefined ? "GET" : "POST",
    headers,
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  return { status: res.status, body: await res.json() };
}

interface Pair {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  familyId: string;
}

const refresh = (gw: GatewayChild, refreshToken: string) =>
  call(gw, "/v1/auth/refresh", { body: { refreshToken } });
const rotations = (home: string, familyId: string) =>
  withStore(home, (s) => s.tokens.rotations(familyId));
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

/** `n` concurrent refreshes of one token: all must succeed with one identical pair. */
async function burst(gw: GatewayChild, token: string, n: number): Promise<Pair> {
  const answers = await Promise.all(Array.from({ length: n }, () => refresh(gw, token)));
  expect(answers.map((a) => a.status)).toEqual(Array(n).fill(200));
  const pair = answers[0]!.body as Pair;
  for (const a of answers) expect(a.body).toEqual(pair);
  return pair;
}

/** A gateway requiring auth on a fresh home. */
async function authGateway(): Promise<{ home: string; gw: GatewayChild }> {
  const home = tempHome();
  writeConfig(home, { gateway: { requireAuth: true, refreshGraceMs: GRACE_MS } });
  return { home, gw: await startGateway(home) };
}

/** `hearth token create`, then POST /v1/auth/pair with its code. */
async function pair(home: string, gw: GatewayChild): Promise<{ code: string; pair: Pair }> {
  const created = await tokenCreate(home);
  const paired = await call(gw, "/v1/auth/pair", { body: { code: created.code } });
  expect(paired.status).toBe(200);
  expect(paired.body.familyId).toBe(created.familyId);
  return { code: created.code, pair: paired.body as Pair };
}

describe("remote sessions (D6) against a real gateway with requireAuth", () => {
  it("trades a one-time code for a token pair and guards every route but health", async () => {
    const { home, gw } = await authGateway();
    const created = await tokenCreate(home);
    expect(created.code).toMatch(/^[A-Z2-9]{10}$/);
    const paired = await call(gw, "/v1/auth/pair", { body: { code: created.code } });
    expect(paired.status).toBe(200);
    const p0 = paired.body as Pair;
    expect(p0).toMatchObject({ familyId: created.familyId, expiresIn: 15 * 60 });
    expect(p0.accessToken).toMatch(/^hat_[\w-]{20,}$/);
    expect(p0.refreshToken).toMatch(/^hrt_[\w-]{20,}$/);
    const again = await call(gw, "/v1/auth/pair", { body: { code: created.code } });
    expect(again.status).toBe(401);
    expect(again.body.error.code).toBe("HEARTH_UNAUTHORIZED");

    expect((await call(gw, "/v1/health")).status).toBe(200);
    const anonymous = await call(gw, "/v1/sessions");
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toBe("HEARTH_UNAUTHORIZED");
    expect((await call(gw, "/v1/handoffs")).status).toBe(401);
    expect((await call(gw, "/v1/sessions", { token: "hat_forged" })).status).toBe(401);
    expect((await call(gw, "/v1/sessions", { token: p0.refreshToken })).status).toBe(401);
    const allowed = await call(gw, "/v1/sessions", { token: p0.accessToken });
    expect(allowed.status).toBe(200);
    expect(allowed.body.items).toEqual([]);
  });

  it("coalesces refresh bursts into one rotation; a replay after the grace window revokes the family", async () => {
    const { home, gw } = await authGateway();
    const { pair: p0 } = await pair(home, gw);

    // 4 concurrent refreshes of one token: one rotation, one shared new pair.
    const p1 = await burst(gw, p0.refreshToken, 4);
    const p0RotatedAt = Date.now();
    expect(p1.familyId).toBe(p0.familyId);
    expect(p1.refreshToken).not.toBe(p0.refreshToken);
    expect(p1.accessToken).not.toBe(p0.accessToken);
    // Just after (within refreshGraceMs), the same token still gets the same pair: not a replay.
    const late = await refresh(gw, p0.refreshToken);
    expect(late).toEqual({ status: 200, body: p1 });
    expect(await rotations(home, p0.familyId)).toBe(1);
    expect((await call(gw, "/v1/sessions", { token: p1.accessToken })).status).toBe(200);

    // The new refresh token rotates once more.
    const second = await refresh(gw, p1.refreshToken);
    expect(second.status).toBe(200);
    const p2 = second.body as Pair;
    expect([p0.refreshToken, p1.refreshToken]).not.toContain(p2.refreshToken);
    expect(await rotations(home, p0.familyId)).toBe(2);

    // A fresh family, 32 concurrent refreshes while the health route keeps answering.
    const { pair: q0 } = await pair(home, gw);
    const health = Array.from({ length: 4 }, () => call(gw, "/v1/health"));
    const q1 = await burst(gw, q0.refreshToken, 32);
    expect((await Promise.all(health)).map((h) => h.status)).toEqual([200, 200, 200, 200]);
    expect(q1.familyId).toBe(q0.familyId);
    expect(q1.refreshToken).not.toBe(q0.refreshToken);
    expect(await rotations(home, q0.familyId)).toBe(1);

    // A real wait: the behaviour under test is what happens once the grace
    // window (refreshGraceMs) of p0's rotation is over, so it must pass.
    await new Promise((r) => setTimeout(r, Math.max(0, p0RotatedAt + GRACE_MS + 250 - Date.now())));
    const replay = await refresh(gw, p0.refreshToken);
    expect(replay.status).toBe(401);
    expect(replay.body.error.code).toBe("HEARTH_UNAUTHORIZED");
    // The whole family is revoked: its current tokens stop working too.
    expect((await call(gw, "/v1/sessions", { token: p2.accessToken })).status).toBe(401);
    expect((await refresh(gw, p2.refreshToken)).status).toBe(401);
    expect(await rotations(home, p0.familyId)).toBe(2);
    // The other family is untouched.
    expect((await call(gw, "/v1/sessions", { token: q1.accessToken })).status).toBe(200);
    const families = await hearthJson<
      { id: string; revokedAt: number | null; revokedReason: string | null }[]
    >(home, "token", "list");
    const byId = new Map(families.map((f) => [f.id, f]));
    expect(byId.get(p0.familyId)?.revokedAt).toEqual(expect.any(Number));
    expect(byId.get(p0.familyId)?.revokedReason).toMatch(/presented again/);
    expect(byId.get(q0.familyId)?.revokedAt).toBeNull();
  });

  it("stores only hashes of codes and tokens", async () => {
    const { home, gw } = await authGateway();
    const { code, pair: p0 } = await pair(home, gw);
    const p1 = await burst(gw, p0.refreshToken, 4);
    const secrets = [code, p0.accessToken, p0.refreshToken, p1.accessToken, p1.refreshToken];
    expect(await gw.kill("SIGTERM")).toEqual({ code: 0, signal: null });
    expect(gw.stderr).not.toContain(p0.refreshToken);

    const db = new Database(gw.path, { readonly: true, fileMustExist: true });
    let dump: string;
    let hashes: Set<string>;
    try {
      const tables = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .pluck()
        .all() as string[];
      dump = tables.map((t) => JSON.stringify(db.prepare(`SELECT * FROM "${t}"`).all())).join("\n");
      hashes = new Set(db.prepare("SELECT hash FROM auth_tokens").pluck().all() as string[]);
    } finally {
      db.close();
    }
    // The code and both pairs are there, each as its SHA-256, and nowhere in plaintext.
    expect(hashes.size).toBe(secrets.length);
    for (const secret of secrets) {
      expect(hashes.has(sha256(secret))).toBe(true);
      expect(dump).not.toContain(secret);
    }
    const dir = dirname(gw.path);
    const files = readdirSync(dir).filter((f) => f.startsWith(basename(gw.path)));
    expect(files).toContain(basename(gw.path));
    const raw = files.map((f) => readFileSync(join(dir, f)).toString("latin1"));
    for (const secret of secrets) for (const bytes of raw) expect(bytes).not.toContain(secret);
  });
});
