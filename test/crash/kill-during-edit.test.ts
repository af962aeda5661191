import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/index.js";
import { tempHome } from "../helpers/home.js";
import { startWorker } from "../helpers/worker.js";

/**
 * D4 for the suffix edit: replaceSuffix archives and appends in one
 * transaction, so a process killed -9 inside it (statements run, COMMIT
 * not issued) leaves the transcript exactly as it was; the retry with the
 * same idempotency key then applies it once, and a replay of that changes
 * nothing.
 */
describe("kill -9 inside replaceSuffix", () => {
  it("leaves the transcript as it was; the retry applies once", async () => {
    const home = tempHome();
    const setup = await openStore({ home, env: {} });
    const session = await setup.sessions.create();
    await setup.messages.appendBatch(
      session.id,
      Array.from({ length: 5 }, (_, i) => ({ role: "user" as const, content: `m${i}` })),
    );
    await setup.close();
    const edit = {
      sessionId: session.id,
      afterOrdinal: 2,
      contents: ["r0", "r1", "r2"],
      expectLastOrdinal: 4,
      idempotencyKey: "turn-9",
    };

    const doomed = await startWorker({ HEARTH_FAILPOINTS: "write.before-commit=kill@1" });
    await doomed.call("open", { home });
    void doomed.request("replaceSuffix", edit).catch(() => {});
    expect((await doomed.exited).signal).toBe("SIGKILL");

    const state = () => {
      const db = new Database(setup.path, { readonly: true });
      try {
        return {
          rows: db
            .prepare("SELECT content, active FROM messages WHERE session_id = ? ORDER BY ordinal")
            .all(session.id)
            .map((r) => {
              const row = r as { content: string; active: number };
              return `${row.content}${row.active ? "" : " (archived)"}`;
            }),
          edits: (db.prepare("SELECT count(*) AS n FROM suffix_edits").get() as { n: number }).n,
          live: (
            db.prepare("SELECT message_count AS n FROM sessions WHERE id = ?").get(session.id) as {
              n: number;
            }
          ).n,
          integrity: String(db.pragma("integrity_check", { simple: true })),
        };
      } finally {
        db.close();
      }
    };
    expect(state()).toEqual({
      rows: ["m0", "m1", "m2", "m3", "m4"],
      edits: 0,
      live: 5,
      integrity: "ok",
    });

    const retry = await startWorker();
    await retry.call("open", { home });
    const first = await retry.call<{ replayed: boolean; archived: number }>("replaceSuffix", edit);
    const again = await retry.call<{ replayed: boolean; archived: number }>("replaceSuffix", edit);
    await retry.call("close");
    await retry.kill();
    expect(first).toMatchObject({ replayed: false, archived: 2 });
    expect(again).toMatchObject({ replayed: true, archived: 2 });
    expect(state()).toEqual({
      rows: ["m0", "m1", "m2", "m3 (archived)", "m4 (archived)", "r0", "r1", "r2"],
      edits: 1,
      live: 6,
      integrity: "ok",
    });
  });
});
