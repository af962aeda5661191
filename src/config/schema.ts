import { z } from "zod";

/** Journal modes hearth accepts. MEMORY and OFF lose data on a crash and are not offered. */
export const JOURNAL_MODES = ["wal", "delete", "truncate", "persist"] as const;
/** SQLite synchronous levels; docs/durability.md says what each one promises. */
export const SYNCHRONOUS_LEVELS = ["off", "normal", "full", "extra"] as const;

export type JournalMode = (typeof JOURNAL_MODES)[number];
export type SynchronousLevel = (typeof SYNCHRONOUS_LEVELS)[number];

const durability = z
  .object({
    journalMode: z.enum(JOURNAL_MODES).default("wal"),
    synchronous: z.enum(SYNCHRONOUS_LEVELS).default("full"),
    /** Bytes SQLite truncates the WAL to after a checkpoint resets it. */
    journalSizeLimitBytes: z
      .number()
      .int()
      .min(0)
      .default(64 * 1024 * 1024),
    /** Pages in the WAL before a commit runs a passive checkpoint. */
    walAutocheckpointPages: z.number().int().min(1).default(1000),
  })
  .strict();

const store = z
  .object({
    /**
     * Patience of a write: how long it waits (asynchronously) for other
     * processes' writes before HEARTH_BUSY.
     */
    busyTimeoutMs: z.number().int().min(0).max(600_000).default(5000),
    /**
     * How long a writer opening the store waits for a running structural
     * operation (maintenance) before HEARTH_MAINTENANCE_RUNNING.
     */
    gateWaitMs: z.number().int().min(0).max(3_600_000).default(10_000),
  })
  .strict();

const maintenance = z
  .object({
    /**
     * Maintenance windows (M5): how long a long-lived process may stay
     * parked, and how long a structural operation waits for every process to
     * park; calls that arrive meanwhile wait as long, then get
     * HEARTH_MAINTENANCE_RUNNING.
     */
    maxParkMs: z.number().int().min(100).max(600_000).default(30_000),
    /**
     * How often the long-lived processes (gateway, dashboard) add a row to
     * the store's health samples (file sizes, messages stored so far) for
     * the dashboard's chart; and how many days of samples are kept.
     */
    healthSampleMs: z
      .number()
      .int()
      .min(1_000)
      .max(24 * 3_600_000)
      .default(15 * 60_000),
    healthKeepDays: z.number().int().min(1).max(3_650).default(90),
  })
  .strict();

const backup = z
  .object({
    /** How many backups of each profile `hearth backup` keeps; older ones are removed. */
    keep: z.number().int().min(1).max(1000).default(7),
    /** How many forensic copies (taken before repair and restore) are kept. */
    forensicKeep: z.number().int().min(1).max(100).default(3),
  })
  .strict();

const responder = z
  .object({
    /** "echo" (built in, offline) or "openai" (any OpenAI-compatible chat-completions endpoint). */
    kind: z.enum(["echo", "openai"]).default("echo"),
    /** e.g. "https://api.openai.com/v1" or a local server; required for "openai". */
    baseUrl: z.string().url().optional(),
    model: z.string().min(1).optional(),
    /** Name of the environment variable that holds the API key (the key itself never goes in config). */
    apiKeyEnv: z.string().min(1).default("OPENAI_API_KEY"),
    stream: z.boolean().default(true),
    timeoutMs: z.number().int().min(100).max(600_000).default(120_000),
  })
  .strict();

const adapter = z
  .object({
    /** "webhook" POSTs the delivery to `url`; "http" leaves it to API clients (GET /v1/handoffs). */
    kind: z.enum(["webhook", "http"]),
    url: z.string().url().optional(),
    timeoutMs: z.number().int().min(100).max(600_000).default(30_000),
  })
  .strict();

const gateway = z
  .object({
    host: z.string().min(1).default("127.0.0.1"),
    /** 0 picks a free port (printed in the readiness line). */
    port: z.number().int().min(0).max(65535).default(8787),
    bodyLimitBytes: z
      .number()
      .int()
      .min(1024)
      .max(64 * 1024 * 1024)
      .default(1024 * 1024),
    /** Batch concurrent appends into one transaction per tick. */
    groupCommit: z.boolean().default(true),
    /** How long SIGTERM waits for in-flight turns before closing anyway. */
    drainMs: z.number().int().min(0).max(600_000).default(10_000),
    /** How long a second turn on a busy session waits before 409. */
    turnWaitMs: z.number().int().min(0).max(600_000).default(2_000),
    /** A turn lease expires after this long without renewal (a hung holder). */
    leaseMs: z.number().int().min(1_000).max(3_600_000).default(120_000),
    /** Sessions idle this long get ended_at with reason "idle". */
    idleMinutes: z
      .number()
      .int()
      .min(1)
      .max(525_600)
      .default(24 * 60),
    responder: responder.default(responder.parse({})),
    /** Handoff delivery per platform; "http" is always available. */
    adapters: z.record(z.string().min(1), adapter).default({}),
    /** A live transcript longer than this is compacted: archived as history and restarted from a summary the responder writes. */
    compactAfterMessages: z.number().int().min(4).max(100_000).default(400),
    /** Refuse to compact a session until an export has confirmed its archive (hearth sessions export --checkpoint). */
    checkpointRequired: z.boolean().default(false),
    /** Require an access token (Authorization: Bearer) on every /v1 route but health and auth. */
    requireAuth: z.boolean().default(false),
    accessTokenMinutes: z
      .number()
      .int()
      .min(1)
      .max(24 * 60)
      .default(15),
    refreshTokenDays: z.number().int().min(1).max(365).default(30),
    /** Callers presenting a token that was just rotated get the same new pair for this long. */
    refreshGraceMs: z.number().int().min(0).max(120_000).default(10_000),
    /** How often the handoff watcher looks for pending rows. */
    handoffPollMs: z.number().int().min(10).max(60_000).default(250),
  })
  .strict();

const dashboardTls = z
  .object({
    /** PEM certificate chain and private key files (read at start). */
    certFile: z.string().min(1),
    keyFile: z.string().min(1),
  })
  .strict();

const dashboard = z
  .object({
    /** Anything but a loopback address needs dashboard.tls (docs/dashboard.md). */
    host: z.string().min(1).default("127.0.0.1"),
    /** 0 picks a free port (printed in the readiness line). */
    port: z.number().int().min(0).max(65535).default(8788),
    /** Host names (besides loopback and the bound address) the dashboard answers for: DNS-rebinding defence. */
    allowedHosts: z.array(z.string().min(1).max(253)).max(256).default([]),
    /** Serve HTTPS with this certificate; required to listen beyond loopback. */
    tls: dashboardTls.optional(),
    /** How long a login link stays valid. */
    loginLinkMinutes: z
      .number()
      .int()
      .min(1)
      .max(7 * 24 * 60)
      .default(60),
    /** A browser session ends after this long without a request. */
    sessionIdleMinutes: z
      .number()
      .int()
      .min(1)
      .max(30 * 24 * 60)
      .default(12 * 60),
    /** How often the live stream asks SQLite whether another process wrote (PRAGMA data_version). */
    livePollMs: z.number().int().min(20).max(60_000).default(250),
  })
  .strict();

export const configSchema = z
  .object({
    durability: durability.default(durability.parse({})),
    store: store.default(store.parse({})),
    backup: backup.default(backup.parse({})),
    maintenance: maintenance.default(maintenance.parse({})),
    gateway: gateway.default(gateway.parse({})),
    dashboard: dashboard.default(dashboard.parse({})),
  })
  .strict();

export type HearthConfig = z.infer<typeof configSchema>;
/** What a caller or a config file may give: every key optional. */
export type HearthConfigInput = z.input<typeof configSchema>;

export const DEFAULT_CONFIG: HearthConfig = configSchema.parse({});
