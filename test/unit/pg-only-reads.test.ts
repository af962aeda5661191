/**
 * Which statements a lost connection may run again (src/store/pg/pg-errors.ts,
 * onlyReads): plain reads yes; anything that writes, locks or signals, or
 * that does not start as a query, no. And which errors mean the connection
 * itself ended (connectionEnded): not a statement timeout, nor a failure
 * to connect.
 */
import { describe, expect, it } from "vitest";
import { connectionEnded, onlyReads } from "../../src/store/pg/pg-errors.js";

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

describe("connectionEnded (both retries after a lost connection use it)", () => {
  it.each([
    [{ code: "57P01", message: "terminating connection due to administrator command" }],
    [
      {
        code: "57P02",
        message: "terminating connection because of crash of another server process",
      },
    ],
    [{ code: "08006", message: "connection failure" }],
    [{ code: "ECONNRESET", message: "read ECONNRESET" }],
    [{ code: "ETIMEDOUT", message: "read ETIMEDOUT" }],
    [{ message: "Connection terminated unexpectedly" }],
    [{ message: "Client has encountered a connection error and is not queryable" }],
  ])("ended: %o", (err) => {
    expect(connectionEnded(err)).toBe(true);
  });

  it.each([
    [{ code: "57014", message: "canceling statement due to statement timeout" }],
    [{ code: "ECONNREFUSED", message: "connect ECONNREFUSED 127.0.0.1:5432" }],
    [{ code: "40001", message: "could not serialize access" }],
    [{ message: "timeout exceeded when trying to connect" }],
    [{ code: "23505", message: "duplicate key value violates unique constraint" }],
  ])("not ended: %o", (err) => {
    expect(connectionEnded(err)).toBe(false);
  });
});
