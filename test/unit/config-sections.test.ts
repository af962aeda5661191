import { describe, expect, it } from "vitest";
import { z as zod } from "zod";
import { EMPTY_CONFIG_RESULT } from "../../src/config/defaults.js";
import { configSchema } from "../../src/config/schema.js";
import { parseBySection, validateConfig } from "../../src/config/validate.js";
import { int } from "../../src/config/zod.js";

// validate.ts parses a configuration section by section, building only the
// sections it holds; the whole schema is the reference it must equal.
const CASES: Record<string, unknown> = {
  empty: {},
  "one section": { gateway: { port: 9000 } },
  "nested defaults": {
    store: { pg: { pool: { max: 3 } } },
    gateway: { responder: { kind: "openai", baseUrl: "http://127.0.0.1:1/v1", model: "m" } },
  },
  "every section": {
    durability: { synchronous: "normal" },
    store: { busyTimeoutMs: 1 },
    backup: { targets: [{ name: "a", type: "dir", path: "/x" }] },
    replicate: { target: "a" },
    maintenance: { maxParkMs: 100 },
    scheduler: { jobs: [{ name: "b", schedule: "0 3 * * *", kind: "backup" }] },
    gateway: { allowedHosts: ["example.com"] },
    dashboard: { port: 0 },
    start: { restartBackoffMs: 10 },
    tools: { enabled: ["session_search"] },
    redaction: { patterns: [{ name: "p", regex: "x+" }] },
  },
  "problems in three sections": {
    redaction: { patterns: [{ name: "p", regex: "(" }] },
    durability: { synchronous: "sometimes", walAutocheckpointPages: 0.5 },
    gateway: { port: -1, hots: "x", responder: { apiKeyEnv: "PATH" } },
    scheduler: { jobs: [{ name: "b", schedule: "not cron", kind: "backup" }] },
  },
  "a section that is not an object": { gateway: null, store: [] },
  "an unknown section (the whole schema's path)": {
    gatway: { port: 1 },
    store: { busyTimeoutMs: -1 },
  },
  "not an object": ["gateway"],
  "explicitly undefined section": { gateway: undefined },
};

describe("validating section by section", () => {
  for (const [name, raw] of Object.entries(CASES)) {
    it(`gives the whole schema's data or issues, in its order: ${name}`, () => {
      const whole = configSchema().safeParse(raw);
      const bySection = parseBySection(raw);
      if (whole.success) expect(bySection).toStrictEqual({ data: whole.data });
      else expect(bySection).toStrictEqual({ issues: whole.error.issues });
    });
  }

  it("the problems cases do fail, in more than one section (the table tests something)", () => {
    const result = parseBySection(CASES["problems in three sections"]);
    const sections = new Set(result.issues?.map((i) => i.path[0]));
    expect([...sections].sort()).toEqual(["durability", "gateway", "redaction", "scheduler"]);
  });

  it("hands out an absent section's default as a fresh copy", () => {
    const a = validateConfig({ gateway: { port: 1 } }, "t");
    a.tools.enabled.push("x");
    a.store.pg.pool.max = 99;
    const b = validateConfig({ gateway: { port: 1 } }, "t");
    expect(b.tools.enabled).toEqual([]);
    expect(b.store.pg.pool.max).toBe(8);
    expect(EMPTY_CONFIG_RESULT.store.pg.pool.max).toBe(8);
  });
});

describe("int(min, max), the config's integer settings", () => {
  it("accepts and refuses what z.number().int().min().max() does, with the same issues", () => {
    const pairs = [
      [int(1, 10), zod.number().int().min(1).max(10)],
      [int(0), zod.number().int().min(0)],
    ] as const;
    for (const [ours, chained] of pairs) {
      for (const value of [
        1,
        10,
        0,
        11,
        -1,
        1.5,
        "3",
        null,
        undefined,
        Number.NaN,
        2 ** 60,
        Infinity,
      ]) {
        const a = ours.safeParse(value);
        const b = chained.safeParse(value);
        expect(a.success).toBe(b.success);
        expect(a.error?.issues).toStrictEqual(b.error?.issues);
      }
    }
  });
});
