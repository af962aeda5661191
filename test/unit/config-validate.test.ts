import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import { validateConfig } from "../../src/config/validate.js";
import { HearthError } from "../../src/errors.js";

function failure(raw: unknown, source = "config.json"): HearthError {
  try {
    validateConfig(raw, source);
  } catch (err) {
    expect(err).toBeInstanceOf(HearthError);
    return err as HearthError;
  }
  throw new Error(`expected ${JSON.stringify(raw)} to be rejected`);
}

describe("validateConfig", () => {
  it("fills every default from an empty object", () => {
    expect(validateConfig({}, "defaults")).toEqual({
      durability: {
        journalMode: "wal",
        synchronous: "full",
        journalSizeLimitBytes: 64 * 1024 * 1024,
        walAutocheckpointPages: 1000,
        syncOffLoop: true,
        checkpointOffLoop: "always",
      },
      store: {
        busyTimeoutMs: 5000,
        gateWaitMs: 10000,
        readerThreads: 2,
        readerNice: 10,
        pg: { pool: { max: 8, idleTimeoutMs: 30_000 }, statementTimeoutMs: 0 },
      },
      backup: { keep: 7, forensicKeep: 3, nice: 10, targets: [] },
      replicate: {
        intervalMs: 1000,
        snapshotIntervalMs: 21_600_000,
        retentionMs: 604_800_000,
        maxWalBytes: 268_435_456,
      },
      maintenance: { maxParkMs: 30_000, healthSampleMs: 900_000, healthKeepDays: 90 },
      gateway: {
        host: "127.0.0.1",
        port: 8787,
        bodyLimitBytes: 1048576,
        groupCommit: true,
        drainMs: 10000,
        turnWaitMs: 2000,
        leaseMs: 120000,
        idleMinutes: 1440,
        responder: { kind: "echo", apiKeyEnv: "OPENAI_API_KEY", stream: true, timeoutMs: 120000 },
        adapters: {},
        compactAfterMessages: 400,
        compactionWindowTokens: 16000,
        checkpointRequired: false,
        requireAuth: false,
        accessTokenMinutes: 15,
        refreshTokenDays: 30,
        refreshGraceMs: 10000,
        handoffPollMs: 250,
        allowedHosts: [],
        requestTimeoutMs: 30000,
        keepAliveTimeoutMs: 5000,
        maxConnections: 512,
        maxConnectionsPerClient: 256,
        publicMetrics: false,
        authRateLimit: { burst: 50, perMinute: 20 },
      },
      dashboard: {
        host: "127.0.0.1",
        port: 8788,
        allowedHosts: [],
        loginLinkMinutes: 60,
        sessionIdleMinutes: 720,
        livePollMs: 250,
        doctorEveryMs: 900000,
        doctorFreshMs: 300000,
        prices: {},
      },
      start: { restartBackoffMs: 500 },
      scheduler: { port: 8789, drainMs: 30000, alertAfter: 3, jobs: [] },
      tools: {
        enabled: [],
        maxRounds: 8,
        timeoutMs: 30000,
        maxOutputBytes: 16384,
        sessionScope: "chat",
        requirePermission: [],
        permissionTimeoutMs: 600000,
        modules: [],
        settings: {},
        mcpServers: {},
        profiles: {},
      },
      redaction: { enabled: false, builtin: true, patterns: [], profiles: {} },
    });
    expect(DEFAULT_CONFIG).toEqual(validateConfig({}, "defaults"));
  });

  it("keeps given values and defaults the rest of the section", () => {
    const config = validateConfig({ durability: { synchronous: "normal" } }, "x");
    expect(config.durability).toEqual({
      journalMode: "wal",
      synchronous: "normal",
      journalSizeLimitBytes: 64 * 1024 * 1024,
      walAutocheckpointPages: 1000,
      syncOffLoop: true,
      checkpointOffLoop: "always",
    });
    expect(config.store.busyTimeoutMs).toBe(5000);
  });

  it("rejects a misspelt key and suggests the right one", () => {
    const err = failure({ durability: { synchronus: "full" } }, "/home/me/.hearth/config.json");
    expect(err.code).toBe("HEARTH_CONFIG_INVALID");
    expect(err.message).toContain("/home/me/.hearth/config.json");
    expect(err.message).toContain('unknown key "durability.synchronus"');
    expect(err.message).toContain('did you mean "synchronous"');
    expect(err.resource).toBe("/home/me/.hearth/config.json");
    expect(err.hint).toBe('rename "synchronus" to "synchronous"');
    expect(err.details).toEqual({
      problems: [{ key: "durability.synchronus", message: expect.stringContaining("synchronous") }],
    });
  });

  it("rejects a misspelt section at the top level", () => {
    const err = failure({ durabilty: {} });
    expect(err.code).toBe("HEARTH_CONFIG_INVALID");
    expect(err.message).toContain('unknown key "durabilty" (did you mean "durability"?)');
    expect(err.message).toContain("known keys here: durability, store");
  });

  it("lists the known keys and does not guess when nothing is close", () => {
    const err = failure({ store: { colour: "blue" } });
    expect(err.message).not.toContain("did you mean");
    expect(err.message).toContain("known keys here: busyTimeoutMs");
    expect(err.hint).toBe('remove "store.colour"');
  });

  it("names the allowed values of an enum", () => {
    const err = failure({ durability: { synchronous: "fast" } });
    expect(err.code).toBe("HEARTH_CONFIG_INVALID");
    expect(err.message).toContain(
      '"durability.synchronous" must be one of "off", "normal", "full", "extra"',
    );
    const journal = failure({ durability: { journalMode: "memory" } });
    expect(journal.message).toContain('"wal", "delete", "truncate", "persist"');
  });

  it("rejects out-of-range and mistyped numbers, naming the key", () => {
    expect(failure({ store: { busyTimeoutMs: -1 } }).message).toContain('"store.busyTimeoutMs"');
    expect(failure({ store: { busyTimeoutMs: 600_001 } }).message).toContain(
      '"store.busyTimeoutMs"',
    );
    expect(failure({ store: { busyTimeoutMs: "5000" } }).message).toContain(
      '"store.busyTimeoutMs"',
    );
    expect(failure({ durability: { walAutocheckpointPages: 1.5 } }).message).toContain(
      '"durability.walAutocheckpointPages"',
    );
  });

  it("checks store.pg: pool size, timeouts, TLS mode and schema name, naming the key", () => {
    expect(failure({ store: { pg: { pool: { max: 0 } } } }).message).toContain(
      '"store.pg.pool.max"',
    );
    expect(failure({ store: { pg: { statementTimeoutMs: -1 } } }).message).toContain(
      '"store.pg.statementTimeoutMs"',
    );
    expect(failure({ store: { pg: { ssl: { mode: "prefer" } } } }).message).toContain(
      '"store.pg.ssl.mode"',
    );
    // A schema name goes into search_path unquoted: only plain lowercase names.
    for (const schema of ["Hearth", "a;drop", "public, x", "1abc", ""])
      expect(failure({ store: { pg: { schema } } }).message).toContain('"store.pg.schema"');
    expect(failure({ store: { pg: { pool: { maxx: 2 } } } }).message).toContain(
      'did you mean "max"',
    );
    const ok = validateConfig(
      {
        store: {
          pg: { pool: { max: 2 }, ssl: { mode: "verify-full", ca: "/ca.pem" }, schema: "hearth_2" },
        },
      },
      "test",
    );
    expect(ok.store.pg).toEqual({
      pool: { max: 2, idleTimeoutMs: 30_000 },
      statementTimeoutMs: 0,
      ssl: { mode: "verify-full", ca: "/ca.pem" },
      schema: "hearth_2",
    });
  });

  it("reports every problem, not only the first", () => {
    const err = failure({ durability: { synchronous: "fast", journalMode: "off" } });
    const problems = (err.details as { problems: { key: string }[] }).problems;
    expect(problems.map((p) => p.key).sort()).toEqual([
      "durability.journalMode",
      "durability.synchronous",
    ]);
  });

  it("rejects a top level that is not an object", () => {
    expect(failure([]).code).toBe("HEARTH_CONFIG_INVALID");
    expect(failure("wal").code).toBe("HEARTH_CONFIG_INVALID");
  });
});

describe("security-relevant config values (issue 11)", () => {
  it("rejects allowedHosts entries with ports, wildcards or schemes, and accepts names and addresses", () => {
    for (const bad of ["*", "*.example.com", "example.com:8080", "http://example.com", "a b"]) {
      expect(() => validateConfig({ gateway: { allowedHosts: [bad] } }, "x"), bad).toThrow(
        /allowedHosts/,
      );
    }
    const ok = ["agent.example.com", ".lan.example", "192.0.2.7", "::1", "[::1]"];
    expect(validateConfig({ gateway: { allowedHosts: ok } }, "x").gateway.allowedHosts).toEqual(ok);
  });

  it("rejects a listen address with spaces, a port or brackets (it was an internal error at listen)", () => {
    for (const section of ["gateway", "dashboard"] as const) {
      for (const bad of [
        "127.0.0.1 ",
        " 127.0.0.1",
        "127.0.0.1:8787",
        "[::1]",
        "a b",
        ".example.com",
      ]) {
        expect(() => validateConfig({ [section]: { host: bad } }, "x"), bad).toThrow(
          new RegExp(`${section}\\.host`),
        );
      }
      for (const ok of ["127.0.0.1", "::1", "0.0.0.0", "::", "localhost", "agent.example.com"])
        expect(validateConfig({ [section]: { host: ok } }, "x")[section].host).toBe(ok);
    }
  });

  it("rejects a responder baseUrl with user info or a non-http scheme, without echoing the password", () => {
    for (const baseUrl of [
      "http://u:hunter2@127.0.0.1/v1",
      "http://u@127.0.0.1/v1",
      "file:///etc/passwd",
    ]) {
      let message = "";
      try {
        validateConfig({ gateway: { responder: { kind: "openai", baseUrl, model: "m" } } }, "x");
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message, baseUrl).toContain("gateway.responder.baseUrl");
      expect(message).not.toContain("hunter2");
    }
  });
});
