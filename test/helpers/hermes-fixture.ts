/**
 * Hermes Agent state.db files for the import tests, written here from the
 * schema Hermes documents (its developer guide's session-storage page and
 * the CREATE TABLE statements it ships): the core sessions and messages
 * columns every handled version has, and the later columns and tables
 * added at the versions named below. Hermes adds columns declaratively, so
 * where the docs give no version for a column, the version chosen here is
 * ours; the importer reads the columns a file has, never assumes them.
 */
import Database from "better-sqlite3";

const SESSIONS_CORE = `id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT,
  model_config TEXT, system_prompt TEXT, parent_session_id TEXT REFERENCES sessions(id),
  started_at REAL NOT NULL, ended_at REAL, end_reason TEXT, message_count INTEGER DEFAULT 0,
  tool_call_count INTEGER DEFAULT 0, input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0,
  cache_read_tokens INTEGER DEFAULT 0, cache_write_tokens INTEGER DEFAULT 0,
  reasoning_tokens INTEGER DEFAULT 0, billing_provider TEXT, billing_base_url TEXT, billing_mode TEXT,
  estimated_cost_usd REAL, actual_cost_usd REAL, cost_status TEXT, cost_source TEXT,
  pricing_version TEXT, title TEXT, api_call_count INTEGER DEFAULT 0`;

const MESSAGES_CORE = `id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
  role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
  timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT, reasoning TEXT,
  reasoning_details TEXT, codex_reasoning_items TEXT, reasoning_content TEXT, codex_message_items TEXT`;

/** Columns added after schema 17, by the version a fixture gets them at. */
const LATER_COLUMNS: { version: number; table: "sessions" | "messages"; columns: string }[] = [
  {
    version: 18,
    table: "sessions",
    columns: `session_key TEXT, chat_id TEXT, chat_type TEXT, thread_id TEXT, display_name TEXT,
      origin_json TEXT, expiry_finalized INTEGER DEFAULT 0`,
  },
  {
    version: 21,
    table: "messages",
    columns: "platform_message_id TEXT, observed INTEGER DEFAULT 0",
  },
  {
    version: 24,
    table: "messages",
    columns: "active INTEGER NOT NULL DEFAULT 1, compacted INTEGER NOT NULL DEFAULT 0",
  },
  { version: 25, table: "sessions", columns: "system_prompt_hash TEXT" },
  {
    version: 26,
    table: "sessions",
    columns: "archived INTEGER NOT NULL DEFAULT 0, pinned INTEGER NOT NULL DEFAULT 0",
  },
  {
    version: 27,
    table: "sessions",
    columns: "title_source TEXT, last_activity_at REAL, cwd TEXT, git_branch TEXT",
  },
  { version: 28, table: "sessions", columns: "hidden INTEGER NOT NULL DEFAULT 0" },
  {
    version: 28,
    table: "messages",
    columns: "api_content TEXT, display_kind TEXT, display_metadata TEXT, display_order INTEGER",
  },
];

export const HERMES_VERSIONS = [17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30] as const;

/** Create an empty Hermes state.db of `version` at `path` (WAL mode, as Hermes keeps it); returns it open. */
export function createHermesDb(path: string, version: number): Database.Database {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  const cols = (table: "sessions" | "messages") =>
    LATER_COLUMNS.filter((c) => c.table === table && c.version <= version)
      .map((c) => `, ${c.columns}`)
      .join("");
  db.exec(`
    CREATE TABLE schema_version (version INTEGER NOT NULL);
    CREATE TABLE sessions (${SESSIONS_CORE}${cols("sessions")});
    CREATE TABLE messages (${MESSAGES_CORE}${cols("messages")});
    CREATE INDEX idx_messages_session ON messages(session_id, timestamp);
    CREATE VIRTUAL TABLE messages_fts USING fts5(content, tool_name, tool_calls);
    CREATE TABLE state_meta (key TEXT PRIMARY KEY, value TEXT);
  `);
  if (version >= 18)
    db.exec(`CREATE TABLE gateway_routing (scope TEXT NOT NULL DEFAULT '', session_key TEXT NOT NULL,
      entry_json TEXT NOT NULL, updated_at REAL NOT NULL, PRIMARY KEY (scope, session_key))`);
  if (version >= 20)
    db.exec(`CREATE TABLE session_model_usage (session_id TEXT NOT NULL REFERENCES sessions(id),
      model TEXT NOT NULL, billing_provider TEXT NOT NULL DEFAULT '', billing_base_url TEXT NOT NULL DEFAULT '',
      billing_mode TEXT NOT NULL DEFAULT ''${version >= 22 ? ", task TEXT NOT NULL DEFAULT ''" : ""},
      api_call_count INTEGER NOT NULL DEFAULT 0, input_tokens INTEGER NOT NULL DEFAULT 0,
      output_tokens INTEGER NOT NULL DEFAULT 0)`);
  if (version >= 25)
    db.exec("CREATE TABLE system_prompts (hash TEXT PRIMARY KEY, prompt TEXT NOT NULL)");
  db.prepare("INSERT INTO schema_version (version) VALUES (?)").run(version);
  return db;
}

export interface HermesSessionInput {
  id: string;
  source?: string;
  startedAt: number;
  endedAt?: number | null;
  endReason?: string | null;
  title?: string | null;
  parent?: string | null;
  chatId?: string | null;
  userId?: string | null;
  flags?: { archived?: boolean; pinned?: boolean; hidden?: boolean };
  systemPrompt?: string;
}

export interface HermesMessageInput {
  role: string;
  content: string | null;
  at: number;
  toolCalls?: unknown[];
  toolCallId?: string;
  toolName?: string;
  tokens?: number;
  reasoning?: string;
  finishReason?: string;
  /** false: rewound (or, with compacted, compacted away) at the source; needs schema 24. */
  active?: boolean;
  compacted?: boolean;
}

/** A small Hermes writer: insert what a running Hermes would, into the columns the file has. */
export class HermesWriter {
  private readonly sessionCols: Set<string>;
  private readonly messageCols: Set<string>;

  constructor(readonly db: Database.Database) {
    const cols = (t: string) =>
      new Set(
        (db.prepare(`SELECT name FROM pragma_table_info('${t}')`).all() as { name: string }[]).map(
          (r) => r.name,
        ),
      );
    this.sessionCols = cols("sessions");
    this.messageCols = cols("messages");
  }

  session(s: HermesSessionInput): void {
    const row: Record<string, unknown> = {
      id: s.id,
      source: s.source ?? "cli",
      started_at: s.startedAt,
      ended_at: s.endedAt ?? null,
      end_reason: s.endReason ?? null,
      title: s.title ?? null,
      parent_session_id: s.parent ?? null,
      user_id: s.userId ?? null,
      model: "anthropic/claude-sonnet-4.6",
      model_config: JSON.stringify({ temperature: 0.2 }),
      input_tokens: 1200,
      output_tokens: 340,
      chat_id: s.chatId ?? null,
      session_key: s.chatId ? `agent:main:${s.source}:dm:${s.chatId}` : null,
      archived: s.flags?.archived ? 1 : 0,
      pinned: s.flags?.pinned ? 1 : 0,
      hidden: s.flags?.hidden ? 1 : 0,
      title_source: s.title ? "user" : null,
    };
    if (s.systemPrompt !== undefined) {
      if (this.sessionCols.has("system_prompt_hash")) {
        this.db
          .prepare("INSERT OR IGNORE INTO system_prompts (hash, prompt) VALUES (?, ?)")
          .run(`h-${s.systemPrompt.length}`, s.systemPrompt);
        row.system_prompt_hash = `h-${s.systemPrompt.length}`;
      } else row.system_prompt = s.systemPrompt;
    }
    this.insert("sessions", this.sessionCols, row);
  }

  message(sessionId: string, m: HermesMessageInput): number {
    return Number(
      this.insert("messages", this.messageCols, {
        session_id: sessionId,
        role: m.role,
        content: m.content,
        timestamp: m.at,
        tool_calls: m.toolCalls ? JSON.stringify(m.toolCalls) : null,
        tool_call_id: m.toolCallId ?? null,
        tool_name: m.toolName ?? null,
        token_count: m.tokens ?? null,
        reasoning: m.reasoning ?? null,
        finish_reason: m.finishReason ?? null,
        active: m.active === false ? 0 : 1,
        compacted: m.compacted ? 1 : 0,
      }),
    );
  }

  private insert(table: string, have: Set<string>, row: Record<string, unknown>): number | bigint {
    const keys = Object.keys(row).filter((k) => have.has(k));
    return this.db
      .prepare(
        `INSERT INTO ${table} (${keys.join(", ")}) VALUES (${keys.map(() => "?").join(", ")})`,
      )
      .run(...keys.map((k) => row[k])).lastInsertRowid;
  }
}
