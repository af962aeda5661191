/**
 * What store.pg (config/pg.ts) asks of a pool hearth opens: its size and
 * idle timeout, TLS, and what every new connection runs first (the schema
 * in search_path, statement_timeout, read-only for a reader). Set with
 * SET on each new connection rather than startup options, which PgBouncer
 * refuses.
 */
import { readFileSync } from "node:fs";
import type { ConnectionOptions } from "node:tls";
import type { PgSettings } from "../../config/pg.js";
import { HearthError } from "../../errors.js";
import { maskUrl } from "./url.js";

export interface PoolSettings {
  max: number;
  idleTimeoutMillis: number;
  ssl?: ConnectionOptions;
}

/** Pool size, idle timeout and TLS; a CA file that cannot be read refuses (fail closed). */
export function poolSettings(url: string, settings: PgSettings | undefined): PoolSettings {
  const out: PoolSettings = {
    max: settings?.pool.max ?? 8,
    idleTimeoutMillis: settings?.pool.idleTimeoutMs ?? 30_000,
  };
  const ssl = settings?.ssl;
  if (!ssl) return out;
  if (/[?&]ssl(mode)?=/i.test(url))
    throw new HearthError(
      "HEARTH_CONFIG_INVALID",
      `store.pg.ssl is set and ${maskUrl(url)} carries its own ssl/sslmode parameter: one of them would be ignored`,
      { resource: "store.pg.ssl", hint: "remove sslmode from store.url, or remove store.pg.ssl" },
    );
  if (ssl.mode === "require") return { ...out, ssl: { rejectUnauthorized: false } };
  let ca: string | undefined;
  if (ssl.ca !== undefined) {
    try {
      ca = readFileSync(ssl.ca, "utf8");
    } catch (err) {
      throw new HearthError(
        "HEARTH_CONFIG_INVALID",
        `store.pg.ssl.ca: cannot read ${ssl.ca} (${(err as Error).message})`,
        {
          resource: "store.pg.ssl.ca",
          cause: err,
          hint: "point store.pg.ssl.ca at the server's CA certificate (PEM)",
        },
      );
    }
  }
  return { ...out, ssl: { rejectUnauthorized: true, ...(ca === undefined ? {} : { ca }) } };
}

/**
 * store.pg for the operations on the whole database (backup, restore): TLS
 * and the pool, not the schema (pg_dump and pg_restore see every schema)
 * nor the statement timeout (a dump's statements are long).
 */
export function wholeDatabase(settings: PgSettings | undefined): PgSettings | undefined {
  if (!settings) return undefined;
  return {
    pool: settings.pool,
    statementTimeoutMs: 0,
    ...(settings.ssl ? { ssl: settings.ssl } : {}),
  };
}

/** The statements a new connection runs before any other, or undefined when there are none. */
export function sessionSetup(
  settings: PgSettings | undefined,
  readOnly: boolean,
): string | undefined {
  const statements: string[] = [];
  // The name is checked by the config schema (lowercase, digits, _): safe unquoted.
  if (settings?.schema) statements.push(`SET search_path TO ${settings.schema}`);
  if (settings && settings.statementTimeoutMs > 0)
    statements.push(`SET statement_timeout = ${settings.statementTimeoutMs}`);
  if (readOnly) statements.push("SET default_transaction_read_only = on");
  return statements.length === 0 ? undefined : statements.join("; ");
}
