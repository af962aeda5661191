import { type HandoffChange, type HandoffsSql, handoffUpdate } from "../handoffs.js";
import { type SessionRow, toSession } from "../rows.js";
import { sessionNotFound } from "../session-create.js";
import type { HandoffState, Session } from "../types.js";
import type { Access } from "./access.js";

/** The handoff statements on SQLite (../handoffs.ts decides); each transition one IMMEDIATE transaction. */
export class SqliteHandoffs implements HandoffsSql {
  constructor(
    private readonly access: Access,
    /** Wake-ups from commits seen in the wal-index (commit-watch.ts); none: the watcher polls. */
    readonly watch?: HandoffsSql["watch"],
  ) {}

  async transition(sessionId: string, change: HandoffChange): Promise<boolean> {
    return this.access.writeTransaction((conn) => {
      if (!conn.stmt("SELECT 1 FROM sessions WHERE id = ?").get(sessionId))
        throw sessionNotFound(sessionId);
      const params: unknown[] = [];
      const sql = handoffUpdate(sessionId, change, this.access.now(), (value) => {
        params.push(value);
        return "?";
      });
      return conn.stmt(sql).run(...params).changes === 1;
    });
  }

  async list(state: HandoffState, limit: number): Promise<Session[]> {
    // The gateway's handoff watcher polls every profile with it: a probe.
    const probe = this.access.probe();
    // Nothing in that state, the common case: one small statement. The
    // SELECT * is prepared (and cached, ~18 KiB of SQLite's memory per
    // connection) only once a profile has one: a gateway serving 200 idle
    // profiles keeps 3.5 MB less (issue 44). Same index lookup either way.
    if (!probe.stmt("SELECT 1 FROM sessions WHERE handoff_state = ? LIMIT 1").get(state)) return [];
    const rows = probe
      .stmt(`SELECT * FROM sessions WHERE handoff_state = ? ORDER BY handoff_updated_at LIMIT +?`)
      .all(state, limit) as SessionRow[];
    return rows.map(toSession);
  }

  async failOrphans(
    orphaned: (owner: string | null) => boolean,
    reason: string,
  ): Promise<string[]> {
    // The common case at a gateway's start, nothing running, is one read: no
    // write lock, no commit (a row claimed after it has a live owner anyway).
    const running = "FROM sessions WHERE handoff_state = 'running'";
    if (!this.access.probe().stmt(`SELECT 1 ${running} LIMIT 1`).get()) return [];
    return this.access.writeTransaction((conn) => {
      const rows = conn.stmt(`SELECT id, handoff_owner ${running}`).all() as {
        id: string;
        handoff_owner: string | null;
      }[];
      const orphans = rows.filter((r) => orphaned(r.handoff_owner));
      const fail = conn.stmt(
        `UPDATE sessions SET handoff_state = 'failed', handoff_error = ?, handoff_updated_at = ?
         WHERE id = ? AND handoff_state = 'running'`,
      );
      for (const r of orphans) fail.run(reason, this.access.now(), r.id);
      return orphans.map((r) => r.id);
    });
  }
}
