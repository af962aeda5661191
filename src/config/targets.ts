import type { z as Z } from "zod";
import { once } from "./once.js";
import { int, z } from "./zod.js";

/** A target's name: how `replicate.target` and `hearth restore --from` name it. */
export const TARGET_NAME = /^[a-z][a-z0-9-]{0,39}$/;

/**
 * A place off the store's own disk that backups and continuous replication
 * copy to (docs/operations.md#copies-off-the-host): a directory (another
 * disk, a mount) or an S3-compatible bucket. S3 credentials come from the
 * environment (the variables named) or from `credentialsFile`, which must be
 * the user's own private file, as store.passwordFile (HEARTH_PASSWORD_FILE_UNSAFE).
 */
export const targetSchema = once(() =>
  z
    .object({
      name: z.string().regex(TARGET_NAME, "a lowercase name: letters, digits, dashes"),
      type: z.enum(["dir", "s3"]),
      /** dir: an absolute path (created 0700 when missing). */
      path: z.string().min(1).optional(),
      /** s3: the bucket, and a key prefix inside it ("" or ending without a slash). */
      bucket: z.string().min(3).max(63).optional(),
      prefix: z.string().max(512).default(""),
      /** s3: the service's URL (AWS when absent); http:// only for loopback test servers. */
      endpoint: z.string().url().optional(),
      region: z.string().min(1).default("us-east-1"),
      /** s3: path-style URLs (bucket in the path), as MinIO and s3rver need. */
      forcePathStyle: z.boolean().default(false),
      accessKeyIdEnv: z
        .string()
        .regex(/^[A-Z][A-Z0-9_]*$/)
        .default("AWS_ACCESS_KEY_ID"),
      secretAccessKeyEnv: z
        .string()
        .regex(/^[A-Z][A-Z0-9_]*$/)
        .default("AWS_SECRET_ACCESS_KEY"),
      /** s3: a file holding `aws_access_key_id = …` and `aws_secret_access_key = …` lines (relative: under the home). */
      credentialsFile: z.string().min(1).optional(),
    })
    .strict()
    .refine((t) => (t.type === "dir" ? t.path?.startsWith("/") === true : t.bucket !== undefined), {
      message: 'a "dir" target needs an absolute path, an "s3" target a bucket',
    })
    .refine((t) => !/^\/|\/$/.test(t.prefix), {
      message: "prefix has no leading or trailing slash",
    }),
);

export type TargetConfig = Z.infer<ReturnType<typeof targetSchema>>;

/**
 * Continuous replication of each SQLite profile's WAL to `target` (off when
 * absent), run by the gateway (docs/durability.md#continuous-replication).
 */
export const replicateSchema = once(() =>
  z
    .object({
      /** The name of a backup.targets entry; replication is off without one. */
      target: z.string().regex(TARGET_NAME).optional(),
      /** Committed WAL frames leave within this long (the RPO). */
      intervalMs: int(10, 60_000).default(1_000),
      /** A new snapshot of the database this often (restores replay less WAL). */
      snapshotIntervalMs: int(1_000).default(6 * 3_600_000),
      /** Generations and snapshots older than this are removed (the newest snapshot always stays). */
      retentionMs: int(1_000).default(7 * 86_400_000),
      /**
       * While the target fails, the replicator keeps the unshipped WAL from
       * being checkpointed away, so the WAL grows. Past this size it gives up
       * the generation instead (the writer is never held up); the next
       * generation starts with a new snapshot once the target answers.
       */
      maxWalBytes: int(1024 * 1024).default(256 * 1024 * 1024),
    })
    .strict(),
);
