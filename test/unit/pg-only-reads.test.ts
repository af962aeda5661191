/**
 * Which statements a lost connection may run again (src/store/pg/pg-errors.ts,
 * onlyReads): plain reads yes; anything that writes, locks or signals, or
 * that does not start as a query, no.
 */
import { describe, expect, it } from "vitest";
import { onlyReads } from "../../src/store/pg/pg-errors.js";

describe("onlyReads", () => {
  it.each([
    "SELECT * FROM sessions WHERE id = $1",
    "  select count(*) AS n FROM messages",
    "WITH q AS (SELECT to_tsquery('simple', $1) AS q) SELECT id FROM messages, q",
    "SELECT pg_current_snapshot()::text AS snapshot",
    "SELECT lockless FROM t WHERE locked_at IS NULL",
  ])("a read: %s", (text) => {
    expect(onlyReads(text)).toBe(true);
  });

  it.each([
    "UPDATE job_runs SET worker_pid = $1 WHERE id = $2",
    "INSERT INTO messages (id) VALUES ($1)",
    "DELETE FROM sessions",
    "WITH gone AS (DELETE FROM messages RETURNING id) SELECT count(*) FROM gone",
    "SELECT id FROM handoffs WHERE id = $1 FOR UPDATE",
    "SELECT id FROM handoffs FOR NO KEY UPDATE",
    "SELECT id FROM handoffs FOR SHARE",
    "SELECT pg_advisory_lock($1)",
    "SELECT pg_try_advisory_lock_shared($1)",
    "SELECT nextval('s')",
    "SELECT set_config('hearth.x', '1', false)",
    "SELECT pg_notify('c', 'x')",
    "SELECT pg_terminate_backend($1)",
    "LOCK TABLE sessions",
    "TRUNCATE sessions",
    "CALL maintain()",
    "VACUUM sessions",
    "",
  ])("not only a read: %s", (text) => {
    expect(onlyReads(text)).toBe(false);
  });
});
