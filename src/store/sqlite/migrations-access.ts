import type { Migration } from "./migrations.js";

/**
 * Migrations 10 and later: who may do what and who did (token scopes, the
 * audit trail, shared browser logins and hosts, tool permissions). Listed
 * after the store's own in MIGRATIONS; the same rules hold (never edit a
 * shipped one, add the next).
 */
export const ACCESS_MIGRATIONS: readonly Migration[] = [
  {
    version: 10,
    description: "token families carry a scope and the operator's all-profiles mark",
    sql: `
-- What a family's tokens may do (src/store/token-scopes.ts): read, chat
-- (implies read) or admin (implies both). Families made before scopes are
-- admin, so nothing that worked stops working. all_profiles is 1 only for
-- the operator's own dashboard login link (hearth dashboard link): its
-- browser sees every profile the dashboard serves; every other family is
-- good for its own profile only.
ALTER TABLE auth_families ADD COLUMN scope TEXT NOT NULL DEFAULT 'admin'
  CHECK (scope IN ('read', 'chat', 'admin'));
ALTER TABLE auth_families ADD COLUMN all_profiles INTEGER NOT NULL DEFAULT 0
  CHECK (all_profiles IN (0, 1));
`,
  },
  {
    version: 11,
    description: "the audit trail of destructive and exporting acts",
    sql: `
-- One row per act (a delete, an archive, a prune, a restore, a repair, an
-- export, a token created or revoked, a dashboard login, a configuration
-- reload): appended, never updated. No session sweep touches it and nothing
-- prunes it (docs/security.md#audit-trail). No foreign key: a row outlives
-- the sessions it names. targets is a JSON array of ids, detail a JSON
-- object or NULL.
CREATE TABLE audit_log (
  id         INTEGER PRIMARY KEY,
  at         INTEGER NOT NULL,
  action     TEXT NOT NULL,
  outcome    TEXT NOT NULL CHECK (outcome IN ('ok', 'failed')),
  actor_kind TEXT NOT NULL CHECK (actor_kind IN ('local', 'token')),
  actor_id   TEXT NOT NULL,
  via        TEXT NOT NULL,
  address    TEXT,
  targets    TEXT NOT NULL,
  detail     TEXT
) STRICT;
CREATE INDEX audit_log_by_time ON audit_log (at);
`,
  },
  {
    version: 12,
    description: "dashboard browser logins shared by every dashboard of the store",
    sql: `
-- Dashboard browser logins (src/store/browser-logins.ts), so that a
-- cookie issued by one dashboard is accepted by every dashboard of the
-- store (several hosts behind a load balancer). The SHA-256 of the cookie's
-- random id only, never the cookie itself; the CSRF token is derived from
-- the id and not stored. Short-lived and re-made by logging in again, so
-- not copied by hearth migrate; no foreign key, so that a forced copy's
-- TRUNCATE of the token tables is not blocked (a revoked family is joined).
CREATE TABLE dashboard_logins (
  hash         TEXT PRIMARY KEY,
  family_id    TEXT NOT NULL,
  profile      TEXT NOT NULL,
  scope        TEXT NOT NULL CHECK (scope IN ('read', 'chat', 'admin')),
  all_profiles INTEGER NOT NULL CHECK (all_profiles IN (0, 1)),
  created_at   INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL,
  revoked_at   INTEGER
) STRICT;
CREATE INDEX dashboard_logins_by_expiry ON dashboard_logins (expires_at);
`,
  },
  {
    version: 13,
    description: "permission asked before a tool acts, and the per-session grants",
    sql: `
-- One row per tool call that asked a person first (src/store/tool-permissions.ts):
-- pending while decision is NULL; the first decision (allow_once,
-- allow_always, reject, expired, cancelled) is final. A turn resumed after
-- a crash finds its request here and waits for the same answer. tool_grants
-- holds "allow always" per session and tool.
CREATE TABLE tool_permissions (
  session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  call_id      TEXT NOT NULL,
  tool         TEXT NOT NULL,
  summary      TEXT NOT NULL,
  requested_at INTEGER NOT NULL,
  deadline_at  INTEGER NOT NULL,
  decision     TEXT CHECK (decision IN ('allow_once', 'allow_always', 'reject', 'expired', 'cancelled')),
  decided_at   INTEGER,
  PRIMARY KEY (session_id, call_id)
) STRICT;
CREATE TABLE tool_grants (
  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  tool       TEXT NOT NULL,
  granted_at INTEGER NOT NULL,
  PRIMARY KEY (session_id, tool)
) STRICT;
`,
  },
];
