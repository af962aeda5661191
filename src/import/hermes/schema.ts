/**
 * Which Hermes Agent state.db this is: its schema version (the one-row
 * schema_version table) and the columns its tables really have. Hermes adds
 * columns declaratively (it diffs its CREATE TABLE against the live table on
 * every open), so two stores at one version may differ in columns: hearth
 * reads what is there, and only the version decides whether it is read.
 */
import { HearthError } from "../../errors.js";
import type { ForeignReader } from "../../store/sqlite/foreign-source.js";

/** Schema 17 (Hermes 0.18) is the oldest read; 30 the newest. docs/import.md lists them. */
export const OLDEST_HERMES_SCHEMA = 17;
export const NEWEST_HERMES_SCHEMA = 30;

const REQUIRED = {
  sessions: ["id", "source", "started_at"],
  messages: ["id", "session_id", "role", "content", "timestamp"],
} as const;

/** Tables that are indexes of others or SQLite's own: never reported as history left behind. */
const DERIVED_TABLE = /^(sqlite_|messages_fts)/;

export interface HermesSchema {
  version: number;
  sessionColumns: ReadonlySet<string>;
  messageColumns: ReadonlySet<string>;
  /** Whether session prompts live in system_prompts (schema 25 on). */
  systemPrompts: boolean;
  /** Every other table with rows: what has no home in hearth. */
  otherTables: { name: string; rows: number }[];
}

export function detectHermesSchema(db: ForeignReader, path: string): HermesSchema {
  const tables = new Set(
    db.all("SELECT name FROM sqlite_schema WHERE type = 'table'").map((r) => String(r.name)),
  );
  if (!tables.has("schema_version") || !tables.has("sessions") || !tables.has("messages")) {
    throw new HearthError(
      "HEARTH_IMPORT_SOURCE_INVALID",
      `refusing to import ${path}: it is a SQLite database, but not a Hermes Agent state.db (no schema_version, sessions and messages tables)`,
      { resource: path, hint: "give the state.db of a Hermes Agent profile (~/.hermes/state.db)" },
    );
  }
  const raw = db.get("SELECT version FROM schema_version LIMIT 1")?.version;
  const version = typeof raw === "number" || typeof raw === "bigint" ? Number(raw) : Number.NaN;
  if (
    !Number.isInteger(version) ||
    version < OLDEST_HERMES_SCHEMA ||
    version > NEWEST_HERMES_SCHEMA
  ) {
    const which = Number.isNaN(version)
      ? `an unreadable schema version (${String(raw)})`
      : `schema version ${version}`;
    throw new HearthError(
      "HEARTH_IMPORT_SCHEMA_UNSUPPORTED",
      `refusing to import ${path}: it has ${which}; this hearth reads Hermes Agent schema versions ${OLDEST_HERMES_SCHEMA} to ${NEWEST_HERMES_SCHEMA}`,
      {
        resource: path,
        hint:
          version > NEWEST_HERMES_SCHEMA
            ? "upgrade hearth to a release that reads this schema; nothing was imported"
            : "open the store once with a Hermes Agent of 0.18 or later (it migrates it), then import",
        details: { version: Number.isNaN(version) ? null : version },
      },
    );
  }
  const columns = (table: string) =>
    new Set(db.all(`SELECT name FROM pragma_table_info('${table}')`).map((r) => String(r.name)));
  const sessionColumns = columns("sessions");
  const messageColumns = columns("messages");
  for (const [table, have] of [
    ["sessions", sessionColumns],
    ["messages", messageColumns],
  ] as const) {
    const missing = REQUIRED[table].filter((c) => !have.has(c));
    if (missing.length > 0)
      throw new HearthError(
        "HEARTH_IMPORT_SCHEMA_UNSUPPORTED",
        `refusing to import ${path}: its ${table} table has no ${missing.join(", ")} column (schema version ${version})`,
        {
          resource: path,
          hint: "open the store once with its Hermes Agent (it reconciles its columns), then import",
        },
      );
  }
  const known = new Set(["schema_version", "sessions", "messages", "system_prompts"]);
  const otherTables = [...tables]
    .filter((t) => !known.has(t) && !DERIVED_TABLE.test(t))
    .sort()
    .map((name) => ({
      name,
      rows: Number(db.get(`SELECT count(*) AS n FROM "${name.replaceAll('"', '""')}"`)?.n ?? 0),
    }))
    .filter((t) => t.rows > 0);
  return {
    version,
    sessionColumns,
    messageColumns,
    systemPrompts: tables.has("system_prompts") && sessionColumns.has("system_prompt_hash"),
    otherTables,
  };
}
