import { ACCESS_MIGRATIONS } from "./migrations-access.js";
import { GRAPH_MIGRATIONS } from "./migrations-graph.js";

/**
 * Forward-only schema migrations. `user_version` holds the number of the last
 * one applied. Never edit a shipped migration: add the next one.
 */
export interface Migration {
  version: number;
  description: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "sessions, messages, full-text search, meta",
    sql: `
CREATE TABLE sessions (
  id               TEXT PRIMARY KEY,
  profile          TEXT NOT NULL,
  source           TEXT NOT NULL,
  chat_key         TEXT,
  title            TEXT,
  title_source     TEXT CHECK (title_source IN ('user', 'auto')),
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  last_activity_at INTEGER NOT NULL,
  ended_at         INTEGER,
  end_reason       TEXT,
  parent_id        TEXT REFERENCES sessions(id) ON DELETE SET NULL,
  pinned           INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
  archived         INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
  hidden           INTEGER NOT NULL DEFAULT 0 CHECK (hidden IN (0, 1)),
  handoff_state    TEXT CHECK (handoff_state IN ('pending', 'running', 'completed', 'failed')),
  handoff_platform TEXT,
  handoff_owner    TEXT,
  handoff_error    TEXT,
  handoff_updated_at INTEGER,
  -- Informational counters for listings. Emptiness is never decided from
  -- them (D2): that is an EXISTS probe on messages.
  message_count    INTEGER NOT NULL DEFAULT 0,
  token_count      INTEGER NOT NULL DEFAULT 0,
  next_ordinal     INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE UNIQUE INDEX sessions_visible_title ON sessions (title)
  WHERE title IS NOT NULL AND archived = 0 AND hidden = 0;
CREATE INDEX sessions_by_activity ON sessions (last_activity_at DESC, id DESC);
CREATE INDEX sessions_by_chat ON sessions (source, chat_key);
CREATE INDEX sessions_by_parent ON sessions (parent_id) WHERE parent_id IS NOT NULL;

CREATE TABLE messages (
  id              INTEGER PRIMARY KEY,
  session_id      TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  ordinal         INTEGER NOT NULL,
  role            TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
  content         TEXT NOT NULL,
  content_type    TEXT NOT NULL DEFAULT 'text' CHECK (content_type IN ('text', 'json')),
  name            TEXT,
  tool_calls      TEXT,
  tool_call_id    TEXT,
  tokens_in       INTEGER,
  tokens_out      INTEGER,
  created_at      INTEGER NOT NULL,
  -- 1 = live transcript; 0 = history (rewound or compacted), never swept.
  active          INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
  archived_reason TEXT CHECK (archived_reason IN ('rewind', 'compaction')),
  client_id       TEXT,
  UNIQUE (session_id, ordinal)
) STRICT;

CREATE UNIQUE INDEX messages_by_client_id ON messages (session_id, client_id)
  WHERE client_id IS NOT NULL;
CREATE INDEX messages_live ON messages (session_id, active, ordinal);

CREATE VIRTUAL TABLE messages_fts USING fts5 (
  content,
  content = 'messages',
  content_rowid = 'id',
  tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
  INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
  INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
  INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
  INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
END;

CREATE TABLE meta (
  key        TEXT PRIMARY KEY,
  value      TEXT NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
`,
  },
  {
    version: 2,
    description: "remote sessions: token families and hashed tokens (D6)",
    sql: `
CREATE TABLE auth_families (
  id             TEXT PRIMARY KEY,
  label          TEXT,
  created_at     INTEGER NOT NULL,
  revoked_at     INTEGER,
  revoked_reason TEXT
) STRICT;

-- Only SHA-256 hashes of tokens are stored, never the tokens.
CREATE TABLE auth_tokens (
  hash       TEXT PRIMARY KEY,
  family_id  TEXT NOT NULL REFERENCES auth_families (id) ON DELETE CASCADE,
  kind       TEXT NOT NULL CHECK (kind IN ('pairing', 'access', 'refresh')),
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  -- pairing: redeemed; refresh: rotated (presenting it again is reuse)
  used_at    INTEGER
) STRICT;
CREATE INDEX auth_tokens_by_family ON auth_tokens (family_id);
`,
  },
  {
    version: 3,
    description: "the search index can be marked degraded: canonical writes go on without it",
    sql: `
DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;
-- While meta holds 'fts_degraded' (set when the index is found damaged), the
-- derived index is not maintained; repair rebuilds it and clears the flag.
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_degraded') BEGIN
  INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_degraded') BEGIN
  INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages
WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_degraded') BEGIN
  INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
  INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
END;
`,
  },
  {
    version: 4,
    description: "scheduled job runs: every run recorded with its honest outcome (M4)",
    sql: `
CREATE TABLE job_runs (
  id                 INTEGER PRIMARY KEY,
  job                TEXT NOT NULL,
  profile            TEXT NOT NULL,
  trigger            TEXT NOT NULL CHECK (trigger IN ('schedule', 'catch-up', 'manual', 'retry')),
  attempt            INTEGER NOT NULL DEFAULT 1,
  -- The due time the run answers (ms since epoch); the request time for manual runs.
  scheduled_at       INTEGER NOT NULL,
  started_at         INTEGER,
  finished_at        INTEGER,
  outcome            TEXT NOT NULL CHECK (outcome IN ('running', 'ok', 'refused', 'failed', 'skipped', 'missed', 'unknown')),
  exit_code          INTEGER,
  signal             TEXT,
  duration_ms        INTEGER,
  error_code         TEXT,
  -- JSON array of the holders named by a refusal.
  holders            TEXT,
  note               TEXT,
  output_tail        TEXT,
  -- The worker (P1 identity); a run without one never passed the go gate.
  worker_pid         INTEGER,
  worker_start_ticks INTEGER,
  -- The process that launched it (scheduler or CLI), and the boot both ran in.
  launcher_pid       INTEGER,
  launcher_start_ticks INTEGER,
  boot_id            TEXT
) STRICT;
CREATE INDEX job_runs_by_job ON job_runs (job, profile, scheduled_at DESC, id DESC);
CREATE INDEX job_runs_active ON job_runs (job, profile) WHERE outcome IN ('running', 'unknown');
`,
  },
  {
    version: 5,
    description:
      "health samples: file sizes and messages stored, over time (the dashboard's chart)",
    sql: `
-- One small row every maintenance.healthSampleMs, written by a long-lived
-- process (gateway or dashboard) as an ordinary row write; rows older than
-- maintenance.healthKeepDays are deleted by the same write.
CREATE TABLE health_samples (
  at              INTEGER PRIMARY KEY,
  database_bytes  INTEGER NOT NULL,
  wal_bytes       INTEGER NOT NULL,
  -- max(messages.id) then: messages stored per day are differences of it
  last_message_id INTEGER NOT NULL
) STRICT;
`,
  },
  {
    version: 6,
    description:
      "library scope: session owner and JSON metadata, message metadata, idempotent suffix edits",
    sql: `
-- The owner (user, tenant, resource) a session belongs to: list() and
-- search() filter on it through this index.
ALTER TABLE sessions ADD COLUMN owner_id TEXT;
-- Caller-defined JSON objects (validated and size-capped by the library).
ALTER TABLE sessions ADD COLUMN metadata TEXT;
ALTER TABLE messages ADD COLUMN metadata TEXT;
CREATE INDEX sessions_by_owner ON sessions (owner_id, last_activity_at DESC, id DESC)
  WHERE owner_id IS NOT NULL;

-- One row per committed messages.replaceSuffix() that carried an
-- idempotency key: a replay returns the first result instead of editing
-- again. Deleted with its session.
CREATE TABLE suffix_edits (
  session_id      TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  idempotency_key TEXT NOT NULL,
  request_hash    TEXT NOT NULL,
  archived        INTEGER NOT NULL,
  -- JSON array of the ids of the messages it appended
  message_ids     TEXT NOT NULL,
  created_at      INTEGER NOT NULL,
  PRIMARY KEY (session_id, idempotency_key)
) STRICT;
`,
  },
  {
    version: 7,
    description: "graph checkpoints: LangGraph checkpoints, channel values and pending writes",
    sql: `
-- One row per checkpoint of a graph thread, keyed like LangGraph keys them.
-- The checkpoint itself is stored without its channel values: those are
-- rows of graph_blobs, each written once by the checkpoint where the channel
-- changed. blob_refs maps each channel to that checkpoint, so two processes
-- that fork one thread and reach the same channel version with different
-- values never read each other's. Metadata is JSON text: list() filters on it.
CREATE TABLE graph_checkpoints (
  thread_id            TEXT NOT NULL,
  checkpoint_ns        TEXT NOT NULL DEFAULT '',
  checkpoint_id        TEXT NOT NULL,
  parent_checkpoint_id TEXT,
  type                 TEXT NOT NULL,
  checkpoint           BLOB NOT NULL,
  metadata             TEXT NOT NULL CHECK (json_valid(metadata)),
  -- {channel: checkpoint_id of the graph_blobs row holding its value}
  blob_refs            TEXT NOT NULL CHECK (json_valid(blob_refs)),
  created_at           INTEGER NOT NULL,
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
) STRICT, WITHOUT ROWID;
-- list() without a thread: newest checkpoints first across threads.
CREATE INDEX graph_checkpoints_by_id ON graph_checkpoints (checkpoint_id DESC);

-- A channel's value as the checkpoint that changed it wrote it ('empty'
-- type: the channel was cleared).
CREATE TABLE graph_blobs (
  thread_id     TEXT NOT NULL,
  checkpoint_ns TEXT NOT NULL DEFAULT '',
  checkpoint_id TEXT NOT NULL,
  channel       TEXT NOT NULL,
  version       TEXT NOT NULL,
  type          TEXT NOT NULL,
  value         BLOB,
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, channel)
) STRICT, WITHOUT ROWID;
CREATE INDEX graph_blobs_by_version ON graph_blobs (thread_id, checkpoint_ns, channel, version);

-- Writes of the tasks of a superstep, linked to the checkpoint they follow.
CREATE TABLE graph_writes (
  thread_id     TEXT NOT NULL,
  checkpoint_ns TEXT NOT NULL DEFAULT '',
  checkpoint_id TEXT NOT NULL,
  task_id       TEXT NOT NULL,
  idx           INTEGER NOT NULL,
  channel       TEXT NOT NULL,
  type          TEXT NOT NULL,
  value         BLOB,
  task_path     TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
) STRICT, WITHOUT ROWID;
`,
  },
  {
    version: 8,
    description: "sealed refresh rotations for the grace window (D6)",
    sql: `
-- The pair a refresh rotation issued, kept for gateway.refreshGraceMs so that
-- a second presenter of the same refresh token gets that same pair. Keyed by
-- the rotated token's hash; the pair is AES-256-GCM sealed under a key
-- derived from the token itself (src/store/rotation-seal.ts): this table
-- alone yields no usable token. Short-lived (the next rotation deletes
-- expired rows), so hearth migrate does not copy it.
CREATE TABLE auth_rotations (
  hash       TEXT PRIMARY KEY,
  family_id  TEXT NOT NULL,
  sealed     BLOB NOT NULL,
  expires_at INTEGER NOT NULL
) STRICT;
CREATE INDEX auth_rotations_by_expiry ON auth_rotations (expires_at);
`,
  },
  {
    version: 9,
    description: "the search index is merged by hearth, off the writer's event loop",
    sql: `
-- FTS5's automatic merge runs inside a commit: every 64 leaf pages written
-- it merges 64 pages per level of the index at once (~1,000 pages, 30 to
-- 170 ms of a writer's event loop on a store of a million messages). With
-- it off, hearth merges the same pages in chunks off the writer's loop
-- (src/store/sqlite/fts-merge.ts); FTS5's crisis merge (16 segments on one level)
-- still stands behind that.
INSERT INTO messages_fts (messages_fts, rank) VALUES ('automerge', 0);
`,
  },
  ...ACCESS_MIGRATIONS,
  ...GRAPH_MIGRATIONS,
  {
    version: 15,
    description: "a chat's open session found in the index's order, whatever the chat's history",
    sql: `
-- A chat's open session is its newest session not ended (src/store/sqlite/open-chat.ts):
-- on (source, chat_key) alone, every session the chat ever had was read and
-- sorted for it, at each turn the gateway appends on a chat it remembers
-- (inside the write transaction) and at each lookup (~107 µs with 1,000
-- ended sessions, ~13 µs with none, against ~9 µs in this order).
DROP INDEX sessions_by_chat;
CREATE INDEX sessions_by_chat ON sessions (source, chat_key, created_at);
`,
  },
];

export const LATEST_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;
