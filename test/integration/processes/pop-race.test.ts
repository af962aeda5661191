import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { tempHome } from "../../helpers/home.js";
import { startWorker, type Worker } from "../../helpers/worker.js";

/**
 * An agent loop's "undo the last item" in one process while another
 * process appends to the same session: the compare-and-set pop archives
 * only the message its caller saw as last, never an append that landed
 * in between, and no acknowledged append is lost.
 */
const workers: Worker[] = [];
afterEach(async () => {
  for (const w of workers.splice(0)) await w.kill();
});

async function seeded(n: number): Promise<{ home: string; path: string; sessionId: string }> {
  const home = tempHome();
  const setup = await openStore({ home, env: {} });
  const session = await setup.sessions.create({ title: "race" });
  await setup.messages.appendBatch(
    session.id,
    Array.from({ length: n }, (_, i) => ({ role: "user" as const, content: `seed ${i}` })),
  );
  await setup.close();
  return { home, path: setup.path, sessionId: session.id };
}

describe("pop against append, two processes", () => {
  it("a pop whose caller read the tail before another process appended is refused; the append stays live", async () => {
    const { home, path, sessionId } = await seeded(3);
    const [popper, appender] = await Promise.all([startWorker(), startWorker()]);
    workers.push(popper, appender);
    await Promise.all([popper.call("open", { home }), appender.call("open", { home })]);

    // The popper reads the tail, then the other process appends, then the popper pops.
    const [last] = await popper.call<{ id: number; ordinal: number }[]>("tail", {
      sessionId,
      n: 1,
    });
    expect(last!.ordinal).toBe(2);
    const appended = await appender.call<{ id: number }>("append", {
      sessionId,
      content: "landed in between",
      clientId: "between",
    });
    const reply = await popper.request("pop", { sessionId, expectLastOrdinal: last!.ordinal });
    expect(reply.ok).toBe(false);
    expect(reply.error?.code).toBe("HEARTH_CONFLICT");

    // Read again and pop: now it archives exactly what it saw, the append.
    const [again] = await popper.call<{ id: number; ordinal: number }[]>("tail", {
      sessionId,
      n: 1,
    });
    expect(again!.id).toBe(appended.id);
    await Promise.all([popper.call("close"), appender.call("close")]);

    const db = new Database(path, { readonly: true });
    try {
      const rows = db
        .prepare("SELECT id, active, content FROM messages WHERE session_id = ? ORDER BY ordinal")
        .all(sessionId) as { id: number; active: number; content: string }[];
      expect(rows.map((r) => [r.content, r.active])).toEqual([
        ["seed 0", 1],
        ["seed 1", 1],
        ["seed 2", 1],
        ["landed in between", 1],
      ]);
    } finally {
      db.close();
    }
  });

  it("racing freely: every archived message is one its popper saw as last, and every acknowledged append is stored", async () => {
    const { home, path, sessionId } = await seeded(200);
    const [popper, appender] = await Promise.all([startWorker(), startWorker()]);
    workers.push(popper, appender);
    await Promise.all([popper.call("open", { home }), appender.call("open", { home })]);

    const appends = 150;
    const [result] = await Promise.all([
      popper.call<{ pops: { saw: number; popped: number | null }[]; conflicts: number }>(
        "popLoop",
        { sessionId, count: 150 },
      ),
      appender.call("appendLoop", { sessionId, count: appends, prefix: "a" }),
    ]);
    await Promise.all([popper.call("close"), appender.call("close")]);
    expect(appender.acks).toHaveLength(appends);
    for (const pop of result.pops) expect(pop.popped).toBe(pop.saw);

    const db = new Database(path, { readonly: true });
    try {
      const rows = db
        .prepare("SELECT id, active, client_id FROM messages WHERE session_id = ?")
        .all(sessionId) as { id: number; active: number; client_id: string | null }[];
      // Nothing deleted: 200 seeds and every acknowledged append are rows.
      expect(rows).toHaveLength(200 + appends);
      const stored = new Set(rows.map((r) => r.client_id).filter((c) => c !== null));
      for (const ack of appender.acks) expect(stored.has(ack)).toBe(true);
      // Archived rows are exactly the popped ones: nothing else was taken.
      const archived = rows.filter((r) => r.active === 0).map((r) => r.id);
      expect(archived.sort((a, b) => a - b)).toEqual(
        result.pops.map((p) => p.popped).sort((a, b) => (a ?? 0) - (b ?? 0)),
      );
      const live = db.prepare("SELECT message_count FROM sessions WHERE id = ?").get(sessionId) as {
        message_count: number;
      };
      expect(live.message_count).toBe(rows.length - archived.length);
    } finally {
      db.close();
    }
  });
});
