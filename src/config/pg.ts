import type { z as Z } from "zod";
import { once } from "./once.js";
import { int, z } from "./zod.js";

// store.pg: how a PostgreSQL store talks to its server (schema.ts). None of
// it applies to a SQLite store, nor to a pool the caller hands openStore().

/** A schema name hearth may put in search_path unquoted: lowercase, digits, underscores. */
export const PG_SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export const pgSchema = once(() => {
  const pool = z
    .object({
      /**
       * Connections one process opens at most. Every process that opens the
       * store has its own pool: processes × max must stay under the server's
       * max_connections (docs/postgres.md).
       */
      max: int(1, 1000).default(8),
      /** An idle connection is closed after this long (0: never). */
      idleTimeoutMs: int(0, 86_400_000).default(30_000),
    })
    .strict();

  return z
    .object({
      pool: pool.default(pool.parse({})),
      /**
       * The server cancels any statement of hearth's that runs longer
       * (SQLSTATE 57014, HEARTH_POSTGRES); 0 leaves the server's setting.
       * Lock waits count: keep it above gateway.turnWaitMs. Migrations run
       * without it.
       */
      statementTimeoutMs: int(0, 86_400_000).default(0),
      /**
       * TLS to the server: "require" encrypts without checking the
       * certificate; "verify-full" checks it against `ca` (a PEM file; the
       * system's CAs without it) and the host name in store.url.
       */
      ssl: z
        .object({
          mode: z.enum(["require", "verify-full"]),
          ca: z.string().min(1).optional(),
        })
        .strict()
        .optional(),
      /**
       * The schema hearth's tables live in (created with them when missing);
       * hearth looks at nothing outside it, so the database may hold other
       * schemas, tables and extensions. Unset: the connection's current
       * schema (usually public), as before this setting existed.
       */
      schema: z
        .string()
        .regex(PG_SCHEMA_NAME, "a lowercase schema name: letters, digits and _ (up to 63)")
        .optional(),
    })
    .strict();
});

export type PgSettings = Z.infer<ReturnType<typeof pgSchema>>;
