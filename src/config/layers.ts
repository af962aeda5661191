import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import { HearthError } from "../errors.js";
import { untrustedReason } from "../files/trusted.js";
import { EMPTY_CONFIG_RESULT } from "./defaults.js";
import type { HearthConfig } from "./schema.js";

// Reading the layers of the configuration (file, environment) and merging
// them; validation is the schema's (validate.ts, load.ts).

/** Environment variables that override the config file, and the key each sets. */
const ENV_KEYS: Record<string, [section: string, key: string, kind: "string" | "int"]> = {
  HEARTH_JOURNAL_MODE: ["durability", "journalMode", "string"],
  HEARTH_SYNCHRONOUS: ["durability", "synchronous", "string"],
  HEARTH_BUSY_TIMEOUT_MS: ["store", "busyTimeoutMs", "int"],
  HEARTH_GATE_WAIT_MS: ["store", "gateWaitMs", "int"],
  HEARTH_READER_THREADS: ["store", "readerThreads", "int"],
  HEARTH_STORE_URL: ["store", "url", "string"],
  HEARTH_STORE_PASSWORD_FILE: ["store", "passwordFile", "string"],
  HEARTH_BACKUP_KEEP: ["backup", "keep", "int"],
  HEARTH_GATEWAY_PORT: ["gateway", "port", "int"],
  HEARTH_GATEWAY_HOST: ["gateway", "host", "string"],
  HEARTH_DASHBOARD_PORT: ["dashboard", "port", "int"],
  HEARTH_DASHBOARD_HOST: ["dashboard", "host", "string"],
  HEARTH_SCHEDULER_PORT: ["scheduler", "port", "int"],
};

/** The unvalidated layers below the caller's overrides. */
export interface ConfigLayers {
  file: string;
  fromFile: Record<string, unknown>;
  fromEnv: Record<string, Record<string, unknown>>;
}

export function readLayers(file: string, env: NodeJS.ProcessEnv): ConfigLayers {
  return { file, fromFile: readConfigFile(file), fromEnv: envLayer(env) };
}

/**
 * The configuration when there is nothing to validate (no keys in the file,
 * no HEARTH_* variable, no override): the schema's result for {}, without
 * loading the schema. undefined when there is something to validate.
 */
export function emptyConfig(layers: ConfigLayers, overrides: unknown): HearthConfig | undefined {
  if (overrides !== undefined) return undefined;
  if (Object.keys(layers.fromFile).length > 0 || Object.keys(layers.fromEnv).length > 0)
    return undefined;
  return structuredClone(EMPTY_CONFIG_RESULT);
}

function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new HearthError("HEARTH_CONFIG_UNREADABLE", `cannot read ${file}: ${String(err)}`, {
      resource: file,
      cause: err,
    });
  }
  try {
    // The file that was opened is the one judged and read (no swap in between).
    refuseUnsafeConfig(file, fstatSync(fd));
    text = readFileSync(fd, "utf8");
  } catch (err) {
    if (err instanceof HearthError) throw err;
    throw new HearthError("HEARTH_CONFIG_UNREADABLE", `cannot read ${file}: ${String(err)}`, {
      resource: file,
      cause: err,
    });
  } finally {
    closeSync(fd);
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      throw new TypeError("the top level must be a JSON object");
    }
    return parsed as Record<string, unknown>;
  } catch (err) {
    throw new HearthError(
      "HEARTH_CONFIG_UNREADABLE",
      `cannot parse ${file}: ${(err as Error).message}`,
      {
        resource: file,
        cause: err,
        hint: `fix the JSON in ${file}, or move it aside to use the defaults`,
      },
    );
  }
}

/**
 * config.json decides where the gateway listens and where transcripts and
 * the API key are sent, so it is trusted only like a database file (S1): a
 * regular file owned by this user (or root), not writable by group or
 * others.
 */
function refuseUnsafeConfig(
  file: string,
  stats: { isFile(): boolean; uid: number; mode: number },
): void {
  if (!stats.isFile()) {
    throw new HearthError("HEARTH_CONFIG_UNREADABLE", `cannot read ${file}: not a regular file`, {
      resource: file,
      hint: `move ${file} aside to use the defaults`,
    });
  }
  const why = untrustedReason(stats);
  if (why === undefined) return;
  throw new HearthError("HEARTH_CONFIG_UNSAFE", `refusing ${file}: ${why}`, {
    resource: file,
    hint: `check its contents, then: chown $(id -u) ${file} && chmod 600 ${file}`,
  });
}

function envLayer(env: NodeJS.ProcessEnv): Record<string, Record<string, unknown>> {
  const layer: Record<string, Record<string, unknown>> = {};
  for (const [name, [section, key, kind]] of Object.entries(ENV_KEYS)) {
    const raw = env[name];
    if (raw === undefined || raw === "") continue;
    const value = kind === "int" && /^-?\d+$/.test(raw) ? Number(raw) : raw;
    layer[section] ??= {};
    layer[section][key] = value;
  }
  return layer;
}

export function merge(
  base: Record<string, unknown>,
  top: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(top)) {
    const below = out[key];
    out[key] = isPlainObject(below) && isPlainObject(value) ? merge(below, value) : value;
  }
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
