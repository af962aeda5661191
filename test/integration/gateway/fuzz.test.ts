import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayChild, startGateway, withStore, writeConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";

// Fuzzed HTTP against one real gateway (issue 14, abuse half): bodies,
// headers, query strings, path segments and FTS queries drawn by
// fast-check. Whatever arrives, the answer is a documented status with a
// stable HEARTH_* code, never a 500, never a stack trace or a path of the
// host; and a refused message writes nothing (the store grows by exactly
// two rows per acknowledged message).
const CODE = /^HEARTH_[A-Z_]+$/;

let home = "";
let gw: GatewayChild;
let acknowledged = 0;
let before = 0;

const countMessages = () => withStore(home, async (s) => (await s.counts()).messages);

beforeAll(async () => {
  home = tempHome();
  writeConfig(home, { gateway: { bodyLimitBytes: 4096, turnWaitMs: 10_000 } });
  gw = await startGateway(home);
  expect((await gw.post({ platform: "web", chat: "seed", content: "seed" })).status).toBe(200);
  before = await countMessages();
}, 30_000);

afterAll(async () => {
  await gw?.kill("SIGTERM");
});

/** Send one request; check the answer's shape; return its status. */
async function send(method: string, path: string, init: RequestInit = {}): Promise<number> {
  const res = await fetch(gw.url(path), { method, ...init, signal: AbortSignal.timeout(15_000) });
  const text = await res.text();
  const where = `${method} ${path} ${String(init.body ?? "").slice(0, 200)} -> ${res.status} ${text.slice(0, 300)}`;
  expect(res.status, where).toBeLessThan(500);
  expect(text, where).not.toMatch(/\n\s+at |node:internal|\/dist\/|\/src\//);
  expect(text, where).not.toContain(home);
  if (res.status >= 400) {
    const body = JSON.parse(text) as { error?: { code?: string; message?: string } };
    expect(body.error?.code, where).toMatch(CODE);
    expect(typeof body.error?.message, where).toBe("string");
  }
  return res.status;
}

const field = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: "binary", maxLength: 30 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 3 }),
);
/** A message body: a valid one with fields replaced, dropped or added, or any JSON at all. */
const messageBody = fc.oneof(
  fc
    .record(
      {
        platform: fc.oneof(fc.constant("web"), field),
        chat: fc.oneof(fc.constant("fuzz"), field),
        content: fc.oneof(fc.constant("hello"), field),
        clientId: field,
        stream: field,
        profile: fc.oneof(fc.constant("default"), field),
        extra: field,
      },
      { requiredKeys: [] },
    )
    .map((o) => JSON.stringify(o)),
  fc.json({ maxDepth: 3 }),
  fc.string({ maxLength: 200 }),
  fc.string({ unit: "binary", maxLength: 200 }),
);
const headerName = fc.stringMatching(/^x-[a-z0-9-]{1,20}$/);
const headerValue = fc.stringMatching(/^[\x20-\x7e]{0,60}$/).map((v) => v.trim());
const contentType = fc.constantFrom(
  "application/json",
  "application/json; charset=utf-16",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/octet-stream",
  "",
);
const queryPart = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom("-1", "0", "1e9", "NaN", "999999999999999999999", "[]", "%", "%zz", "\u0000"),
);
const queryKey = fc.constantFrom(
  "limit",
  "offset",
  "cursor",
  "profile",
  "history",
  "q",
  "state",
  "x",
);

describe("gateway HTTP under fuzzed input", () => {
  it("answers any POST /v1/messages body and headers with a stable code, storing only what it acknowledges", async () => {
    await fc.assert(
      fc.asyncProperty(
        messageBody,
        contentType,
        fc.dictionary(headerName, headerValue, { maxKeys: 4 }),
        async (body, type, extra) => {
          const headers: Record<string, string> = { ...extra };
          if (type) headers["content-type"] = type;
          const status = await send("POST", "/v1/messages", { headers, body });
          if (status === 200) acknowledged++;
        },
      ),
      { numRuns: 150 },
    );
    // Every refused body wrote nothing: two rows (user + reply) per acknowledged one.
    expect(await countMessages()).toBe(before + 2 * acknowledged);
  }, 120_000);

  it("answers any query string, path segment or FTS query on the read routes with a stable code", async () => {
    const query = fc
      .array(fc.tuple(queryKey, queryPart), { maxLength: 4 })
      .map((pairs) => new URLSearchParams(pairs).toString());
    const route = fc.oneof(
      query.map((q) => `/v1/sessions?${q}`),
      query.map((q) => `/v1/handoffs?${q}`),
      fc.string({ maxLength: 80 }).map((seg) => `/v1/sessions/${encodeURIComponent(seg)}`),
      fc
        .tuple(fc.string({ maxLength: 40 }), query)
        .map(([q, rest]) => `/v1/sessions?q=${encodeURIComponent(q)}&${rest}`),
      fc.stringMatching(/^[\x21-\x7e]{0,60}$/).map((raw) => `/v1/sessions?${raw}`),
      fc.stringMatching(/^[a-z0-9/._~-]{0,40}$/).map((p) => `/v1/${p}`),
    );
    await fc.assert(
      fc.asyncProperty(route, fc.constantFrom("GET", "HEAD", "DELETE", "PUT"), async (path, m) => {
        if (m === "HEAD") {
          const res = await fetch(gw.url(path), { method: m });
          expect(res.status).toBeLessThan(500);
          return;
        }
        await send(m, path);
      }),
      { numRuns: 200 },
    );
    expect(await countMessages()).toBe(before + 2 * acknowledged);
  }, 120_000);
});
