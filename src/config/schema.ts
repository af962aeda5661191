import type { z as Z } from "zod";
import { dashboardSchema } from "./dashboard.js";
import { EMPTY_CONFIG_RESULT } from "./defaults.js";
import { allowedHost, bindHost } from "./hosts.js";
import { once } from "./once.js";
import { pgSchema } from "./pg.js";
import { redactionSchema } from "./redaction.js";
import { schedulerSchema } from "./scheduler.js";
import { replicateSchema, targetSchema } from "./targets.js";
import { toolsSchema } from "./tools.js";
import { int, z } from "./zod.js";

/** Journal modes hearth accepts. MEMORY and OFF lose data on a crash and are not offered. */
export const JOURNAL_MODES = ["wal", "delete", "truncate", "persist"] as const;
/** SQLite synchronous levels; docs/durability.md says what each one promises. */
export const SYNCHRONOUS_LEVELS = ["off", "normal", "full", "extra"] as const;

export type JournalMode = (typeof JOURNAL_MODES)[number];
export type SynchronousLevel = (typeof SYNCHRONOUS_LEVELS)[number];

const durability = once(() =>
  z
    .object({
      journalMode: z.enum(JOURNAL_MODES).default("wal"),
      synchronous: z.enum(SYNCHRONOUS_LEVELS).default("full"),
      /** Bytes SQLite truncates the WAL to after a checkpoint resets it. */
      journalSizeLimitBytes: int(0).default(64 * 1024 * 1024),
      /** Pages in the WAL before a commit runs a passive checkpoint. */
      walAutocheckpointPages: int(1).default(1000),
      /**
       * At synchronous FULL or NORMAL in WAL mode, a write's WAL fsync may run
       * on the libuv pool and checkpoints on a thread of their own, so a slow
       * disk never freezes the event loop; the write is still acknowledged
       * only after its fsync. false: SQLite does both inside the commit.
       */
      syncOffLoop: z.boolean().default(true),
      /**
       * With syncOffLoop: "always" (the default) runs every automatic
       * checkpoint on the checkpoint thread, never inside a commit on the
       * writer's thread while that thread is up; "with-fsync" (at FULL)
       * checkpoints inside the commit, as SQLite would, whenever the fsync
       * policy keeps that commit's fsync there too (a quiet loop, a fast disk,
       * no backup): less CPU for a lone writer, a stall of the loop at each
       * checkpoint (docs/durability.md).
       */
      checkpointOffLoop: z.enum(["with-fsync", "always"]).default("always"),
    })
    .strict(),
);

const store = once(() =>
  z
    .object({
      /**
       * Patience of a write: how long it waits (asynchronously) for other
       * processes' writes before HEARTH_BUSY.
       */
      busyTimeoutMs: int(0, 600_000).default(5000),
      /**
       * How long a writer opening the store waits for a running structural
       * operation (maintenance) before HEARTH_MAINTENANCE_RUNNING.
       */
      gateWaitMs: int(0, 3_600_000).default(10_000),
      /**
       * Reader threads of the long-lived processes (gateway, dashboard): large
       * reads (search, export, whole transcripts) run there, each thread on its
       * own read-only connection, so the process's event loop stays free. 0
       * runs them on the event loop.
       */
      readerThreads: int(0, 8).default(2),
      /**
       * The nice value of those threads (Linux renices only the thread): their
       * reads are bulk work, and yield the CPU to the event loops that serve
       * turns whenever both want it; on an idle machine it changes nothing.
       * Raise it (up to 19) when turns matter more than the searches and
       * transcripts served beside them; 0 runs them at the process's priority.
       */
      readerNice: int(0, 19).default(10),
      /**
       * A postgres:// URL: the store lives in that PostgreSQL database instead
       * of the profile's SQLite file (HEARTH_STORE_URL_INVALID when it is not
       * one). One database holds one profile's store.
       */
      url: z.string().optional(),
      /** Pool, timeouts, TLS and schema of a PostgreSQL store (config/pg.ts). */
      pg: pgSchema().default(pgSchema().parse({})),
      /**
       * A file holding the PostgreSQL password (its first line), used when
       * store.url carries none and PGPASSWORD is unset; relative to the home.
       * It must be this user's regular file, mode 0600 or stricter
       * (HEARTH_PASSWORD_FILE_UNSAFE otherwise).
       */
      passwordFile: z.string().min(1).optional(),
    })
    .strict(),
);

const maintenance = once(() =>
  z
    .object({
      /**
       * Maintenance windows (M5): how long a long-lived process may stay
       * parked, and how long a structural operation waits for every process to
       * park; calls that arrive meanwhile wait as long, then get
       * HEARTH_MAINTENANCE_RUNNING.
       */
      maxParkMs: int(100, 600_000).default(30_000),
      /**
       * How often the long-lived processes (gateway, dashboard) add a row to
       * the store's health samples (file sizes, messages stored so far) for
       * the dashboard's chart; and how many days of samples are kept.
       */
      healthSampleMs: int(1_000, 24 * 3_600_000).default(15 * 60_000),
      healthKeepDays: int(1, 3_650).default(90),
    })
    .strict(),
);

const backup = once(() =>
  z
    .object({
      /** How many backups of each profile `hearth backup` keeps; older ones are removed. */
      keep: int(1, 1000).default(7),
      /** How many forensic copies (taken before repair and restore) are kept. */
      forensicKeep: int(1, 100).default(3),
      /**
       * The nice value of the backup's copy thread (Linux renices only that
       * thread): 10 yields the CPU to the processes it runs beside; 0 runs it
       * at the caller's priority (fastest on a machine busy with other work).
       */
      nice: int(0, 19).default(10),
      /** Places off this disk for copies and replication (src/config/targets.ts). */
      targets: z
        .array(targetSchema())
        .default([])
        .refine((ts) => new Set(ts.map((t) => t.name)).size === ts.length, {
          message: "two targets have the same name",
        }),
    })
    .strict(),
);

/** Environment variable names apiKeyEnv may name. */
export const API_KEY_ENV = /^[A-Z][A-Z0-9_]*_(?:API_KEY|KEY|TOKEN)$/;

function safeUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

const authRateLimit = once(() =>
  z
    .object({
      burst: int(1, 100_000).default(50),
      perMinute: int(1, 100_000).default(20),
    })
    .strict(),
);

const scriptStep = once(() =>
  z
    .object({
      content: z.string().default(""),
      toolCalls: z
        .array(
          z
            .object({ name: z.string().min(1), arguments: z.record(z.string(), z.unknown()) })
            .strict(),
        )
        .max(64)
        .optional(),
      /** Pause before each streamed word (lets a test cancel mid-turn). */
      chunkDelayMs: int(0, 60_000).default(0),
    })
    .strict(),
);

const responder = once(() =>
  z
    .object({
      /** "echo" (built in, offline) or "openai" (any OpenAI-compatible chat-completions endpoint). */
      kind: z.enum(["echo", "openai", "script"]).default("echo"),
      /** e.g. "https://api.openai.com/v1" or a local server; required for "openai". */
      baseUrl: z
        .string()
        .url()
        .refine(
          (v) => /^https?:$/.test(safeUrl(v)?.protocol ?? ""),
          "must be an http: or https: URL",
        )
        .refine(
          (v) => !safeUrl(v)?.username && !safeUrl(v)?.password,
          "must not carry a user name or password (user:pass@): the key comes from the variable named by apiKeyEnv",
        )
        .optional(),
      model: z.string().min(1).optional(),
      /**
       * Name of the environment variable that holds the API key (the key itself
       * never goes in config). Only names that look like key variables
       * (`…_API_KEY`, `…_KEY`, `…_TOKEN`), so a config file cannot send an
       * unrelated variable (PATH, a database URL) to the endpoint as a bearer.
       */
      apiKeyEnv: z
        .string()
        .regex(
          API_KEY_ENV,
          "must be an upper-case variable name ending in _API_KEY, _KEY or _TOKEN (e.g. OPENAI_API_KEY)",
        )
        .default("OPENAI_API_KEY"),
      stream: z.boolean().default(true),
      timeoutMs: int(100, 600_000).default(120_000),
      /** kind "script" (tests, demos): the model's answers, in order; see src/turn/scripted.ts. */
      script: z.array(scriptStep()).max(1000).optional(),
    })
    .strict(),
);

const adapter = once(() =>
  z
    .object({
      /** "webhook" POSTs the delivery to `url`; "http" leaves it to API clients (GET /v1/handoffs). */
      kind: z.enum(["webhook", "http"]),
      url: z.string().url().optional(),
      timeoutMs: int(100, 600_000).default(30_000),
    })
    .strict(),
);

const gateway = once(() =>
  z
    .object({
      /** Anything but a loopback address needs requireAuth (docs/security.md). */
      host: bindHost().default("127.0.0.1"),
      /** Host names (besides loopback and the bound address) the gateway answers for: DNS-rebinding defence. */
      allowedHosts: z.array(allowedHost()).max(256).default([]),
      /** 0 picks a free port (printed in the readiness line). */
      port: int(0, 65535).default(8787),
      bodyLimitBytes: int(1024, 64 * 1024 * 1024).default(1024 * 1024),
      /** Batch concurrent appends into one transaction per tick. */
      groupCommit: z.boolean().default(true),
      /** How long SIGTERM waits for in-flight turns before closing anyway. */
      drainMs: int(0, 600_000).default(10_000),
      /** How long a second turn on a busy session waits before 409. */
      turnWaitMs: int(0, 600_000).default(2_000),
      /** A turn lease expires after this long without renewal (a hung holder). */
      leaseMs: int(1_000, 3_600_000).default(120_000),
      /** Sessions idle this long get ended_at with reason "idle". */
      idleMinutes: int(1, 525_600).default(24 * 60),
      responder: responder().default(responder().parse({})),
      /** Handoff delivery per platform; "http" is always available. */
      adapters: z.record(z.string().min(1), adapter()).default({}),
      /** A live transcript longer than this is compacted: archived as history and restarted from a summary the responder writes. */
      compactAfterMessages: int(4, 100_000).default(400),
      /** Compaction summarizes in requests of at most this many tokens (estimated: a token per 3 characters), a window of messages each. */
      compactionWindowTokens: int(1_000, 1_000_000).default(16_000),
      /** Refuse to compact a session until an export has confirmed its archive (hearth sessions export --checkpoint). */
      checkpointRequired: z.boolean().default(false),
      /** Require an access token (Authorization: Bearer) on every /v1 route but health and auth. */
      requireAuth: z.boolean().default(false),
      accessTokenMinutes: int(1, 24 * 60).default(15),
      refreshTokenDays: int(1, 365).default(30),
      /** Callers presenting a token that was just rotated get the same new pair for this long. */
      refreshGraceMs: int(0, 120_000).default(10_000),
      /** How often the handoff watcher looks for pending rows. */
      handoffPollMs: int(10, 60_000).default(250),
      /** A request's headers and body must arrive within this long (slow-body defence); the answer may take longer. */
      requestTimeoutMs: int(100, 600_000).default(30_000),
      /** An idle keep-alive connection is closed after this long. */
      keepAliveTimeoutMs: int(100, 600_000).default(5_000),
      /** Connections beyond this many are dropped on arrival (descriptor exhaustion defence). */
      maxConnections: int(1, 1_000_000).default(512),
      /** Open connections per client address beyond this many are closed on arrival: one client cannot starve the others. */
      maxConnectionsPerClient: int(1, 1_000_000).default(256),
      /** Serve GET /metrics without a token even when requireAuth is on. */
      publicMetrics: z.boolean().default(false),
      /** Per client address: pairing and refresh attempts at once, and refilled per minute; successes are given back. */
      authRateLimit: authRateLimit().default(authRateLimit().parse({})),
    })
    .strict(),
);

export { JOB_KINDS, type JobKind } from "./job-kinds.js";
export {
  cronProblem,
  JOB_NAME,
  type JobConfig,
  type JobConfigInput,
  jobSchema,
} from "./scheduler.js";

/** `hearth start`, the supervisor of the daemons (docs/cli.md). */
const start = once(() =>
  z
    .object({
      /**
       * A crashed child is restarted after this; each crash in a row doubles
       * it, up to 30 s (or this, when larger).
       */
      restartBackoffMs: int(10, 30_000).default(500),
    })
    .strict(),
);

/**
 * The configuration's sections, in order (configSchema() is made of them), each built on first
 * use: validate.ts validates a config section by section and builds only
 * the sections it holds (an absent one is its written-out default,
 * defaults.ts).
 */
export const SECTIONS = {
  durability,
  store,
  backup,
  replicate: replicateSchema,
  maintenance,
  scheduler: schedulerSchema,
  gateway,
  dashboard: dashboardSchema,
  start,
  tools: toolsSchema,
  redaction: redactionSchema,
};

type Sections = typeof SECTIONS;

/**
 * The whole schema: every section of SECTIONS, in its order, with its
 * default (what the section gives for {}); built on first use.
 */
export const configSchema = once(() => {
  const shape = Object.fromEntries(
    Object.entries(SECTIONS).map(([key, section]) => {
      const schema = section() as Z.ZodType;
      return [key, schema.default(schema.parse({}))];
    }),
  ) as { [K in keyof Sections]: Z.ZodDefault<ReturnType<Sections[K]>> };
  return z.object(shape).strict();
});

export type HearthConfig = Z.infer<ReturnType<typeof configSchema>>;
/** What a caller or a config file may give: every key optional. */
export type HearthConfigInput = Z.input<ReturnType<typeof configSchema>>;

/** The configuration with nothing set (test/unit/config-defaults checks it against the schema). */
export const DEFAULT_CONFIG: HearthConfig = structuredClone(EMPTY_CONFIG_RESULT);
