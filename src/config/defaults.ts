import type { HearthConfig } from "./schema.js";

/**
 * What the config schema gives for an empty configuration (`DEFAULT_CONFIG`),
 * written out so that a process with no config.json, no HEARTH_* variable
 * and no override (most CLI commands) never loads zod or builds the schema:
 * that was half of `hearth sessions list`'s start-up. loadConfig validates
 * every non-empty layer with the schema as before. test/unit/config-defaults
 * fails when this drifts from the schema: change both together.
 */
export const EMPTY_CONFIG_RESULT: HearthConfig = {
  durability: {
    journalMode: "wal",
    synchronous: "full",
    journalSizeLimitBytes: 67108864,
    walAutocheckpointPages: 1000,
    syncOffLoop: true,
    checkpointOffLoop: "always",
  },
  store: {
    busyTimeoutMs: 5000,
    gateWaitMs: 10000,
    readerThreads: 2,
    readerNice: 10,
    pg: { pool: { max: 8, idleTimeoutMs: 30000 }, statementTimeoutMs: 0 },
  },
  backup: {
    keep: 7,
    forensicKeep: 3,
    nice: 10,
    targets: [],
  },
  replicate: {
    intervalMs: 1000,
    snapshotIntervalMs: 21600000,
    retentionMs: 604800000,
    maxWalBytes: 268435456,
  },
  maintenance: {
    maxParkMs: 30000,
    healthSampleMs: 900000,
    healthKeepDays: 90,
  },
  scheduler: {
    port: 8789,
    drainMs: 30000,
    alertAfter: 3,
    jobs: [],
  },
  gateway: {
    host: "127.0.0.1",
    allowedHosts: [],
    port: 8787,
    bodyLimitBytes: 1048576,
    groupCommit: true,
    drainMs: 10000,
    turnWaitMs: 2000,
    leaseMs: 120000,
    idleMinutes: 1440,
    responder: {
      kind: "echo",
      apiKeyEnv: "OPENAI_API_KEY",
      stream: true,
      timeoutMs: 120000,
    },
    adapters: {},
    compactAfterMessages: 400,
    compactionWindowTokens: 16000,
    checkpointRequired: false,
    requireAuth: false,
    accessTokenMinutes: 15,
    refreshTokenDays: 30,
    refreshGraceMs: 10000,
    handoffPollMs: 250,
    requestTimeoutMs: 30000,
    keepAliveTimeoutMs: 5000,
    maxConnections: 512,
    maxConnectionsPerClient: 256,
    publicMetrics: false,
    authRateLimit: {
      burst: 50,
      perMinute: 20,
    },
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
  redaction: {
    enabled: false,
    builtin: true,
    patterns: [],
    profiles: {},
  },
};
