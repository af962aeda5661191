/**
 * PostgreSQL's client tools (pg_dump, pg_restore) as hearth runs them:
 * found in PATH or refused with the way out, given the connection through
 * the environment (the password in PGPASSWORD, never on a command line
 * that `ps` shows), named hearth:<kind>:<pid>@<host> like every hearth
 * connection, and their failures coded.
 */
import { execFile } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import type { PgSettings } from "../../config/pg.js";
import { HearthError } from "../../errors.js";
import { maskSecrets } from "../../mask-secrets.js";
import {
  applicationName,
  maskUrl,
  parseStoreUrl,
  TOO_MANY_CONNECTIONS_HINT,
  urlPasswords,
} from "../../store/pg/pool.js";

export type PgTool = "pg_dump" | "pg_restore";

/** The tool's path in PATH, or HEARTH_PG_TOOL_MISSING. */
export function findTool(tool: PgTool, env: NodeJS.ProcessEnv = process.env): string {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, tool);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  throw new HearthError(
    "HEARTH_PG_TOOL_MISSING",
    `${tool} is not in PATH: a backup or restore of a PostgreSQL store runs PostgreSQL's own ${tool}; nothing was written`,
    {
      resource: tool,
      hint: "install PostgreSQL's client tools (Debian: apt-get install postgresql-client) or add their directory to PATH",
    },
  );
}

/**
 * The URL without its password (for argv: neither user info nor a
 * `password=` parameter), and the environment that carries the password.
 */
export function connection(
  url: string,
  kind: string,
  ssl?: PgSettings["ssl"],
): { dbname: string; env: NodeJS.ProcessEnv } {
  const u = parseStoreUrl(url);
  const password =
    [...u.searchParams].find(([key]) => key.toLowerCase() === "password")?.[1] ??
    decodeURIComponent(u.password);
  u.password = "";
  for (const key of [...u.searchParams.keys()])
    if (key.toLowerCase() === "password") u.searchParams.delete(key);
  const env: NodeJS.ProcessEnv = { ...process.env, PGAPPNAME: applicationName(kind) };
  if (password) env.PGPASSWORD = password;
  // store.pg.ssl for libpq: the tools connect as hearth's own pools do.
  if (ssl) env.PGSSLMODE = ssl.mode;
  if (ssl?.ca) env.PGSSLROOTCERT = ssl.ca;
  return { dbname: u.toString(), env };
}

export interface ToolResult {
  stdout: string;
  stderr: string;
}

/** Run a tool to its end; a non-zero exit is a HearthError with its stderr (URL masked). */
export function runTool(
  path: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  url: string,
  doing: string,
): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    execFile(path, args, { env, maxBuffer: 64 * 1048576 }, (err, stdout, stderr) => {
      if (!err) return resolve({ stdout, stderr });
      const text = maskSecrets(
        String(stderr).trim().split("\n").slice(-5).join("\n"),
        urlPasswords(url),
      );
      const unavailable = /could not connect|connection refused|server closed|timeout/i.test(text);
      const auth = /password authentication failed|no password supplied/i.test(text);
      // SQLSTATE 53300: "too many clients already", "too many connections for role/database".
      const slots = /too many (clients|connections)/i.test(text);
      reject(
        new HearthError(
          slots
            ? "HEARTH_PG_TOO_MANY_CONNECTIONS"
            : auth
              ? "HEARTH_PG_AUTH"
              : unavailable
                ? "HEARTH_PG_UNAVAILABLE"
                : "HEARTH_POSTGRES",
          `${doing}: ${path.split("/").pop()} failed (exit ${(err as { code?: unknown }).code ?? "?"}): ${text || err.message}`,
          {
            resource: maskUrl(url),
            cause: err,
            hint: slots
              ? TOO_MANY_CONNECTIONS_HINT
              : auth
                ? "fix the user or password in store.url"
                : unavailable
                  ? `is the server running? pg_isready -d '${maskUrl(url)}'`
                  : "hearth doctor",
          },
        ),
      );
    });
  });
}
