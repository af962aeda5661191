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

const backup = z
  .object({
    /** How many backups of each profile `hearth backup` keeps; older ones are removed. */
    keep: z.number().int().min(1).max(1000).default(7),
    /** How many forensic copies (taken before repair and restore) are kept. */
    forensicKeep: z.number().int().min(1).max(100).default(3),
  })
  .strict();

export const configSchema = z
  .object({
    durability: durability.default(durability.parse({})),
    store: store.default(store.parse({})),
    backup: backup.default(backup.parse({})),
  })
  .strict();

export type HearthConfig = z.infer<typeof configSchema>;
/** What a caller or a config file may give: every key optional. */
export type HearthConfigInput = z.input<typeof configSchema>;

export const DEFAULT_CONFIG: HearthConfig = configSchema.parse({});
