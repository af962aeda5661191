import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { tempHome } from "../../helpers/home.js";
import { startWorker } from "../../helpers/worker.js";

describe("four processes appending at once", () => {
  it("lose no row, duplicate no row, and keep ordinals dense", async () => {
    const home = tempHome();
    const setup = await openStore({ home });
    const shared = await setup.sessions.create({ title: "shared" });
    await setup.close();

    const perWorker = 150;
    const workers = await Promise.all([1, 2, 3, 4].map(() => startWorker()));
    await Promise.all(workers.map((w) => w.call("open", { home })));
    // Every worker writes to the shared session and to a session of its own.
    const own = await Promise.all(
      workers.map((w, i) => w.call<{ id: string }>("create", { title: `own ${i}` })),
    );
    await Promise.all(
      workers.flatMap((w, i) => [
        w.call("appendLoop", { sessionId: shared.id, count: perWorker, prefix: `w${i}` }),
        w.call("appendLoop", { sessionId: own[i]!.id, count: perWorker / 3, prefix: `o${i}` }),
      ]),
    );
    await Promise.all(workers.map((w) => w.call("close")));

    const db = new Database(setup.path, { readonly: true });
    try {
      const rows = db
        .prepare("SELECT ordinal, client_id FROM messages WHERE session_id = ? ORDER BY ordinal")
        .all(shared.id) as { ordinal: number; client_id: string }[];
      expect(rows).toHaveLength(4 * perWorker);
      expect(rows.map((r) => r.ordinal)).toEqual(rows.map((_, i) => i));
      expect(new Set(rows.map((r) => r.client_id)).size).toBe(4 * perWorker);
      for (let i = 0; i < 4; i++) {
        const mine = db
          .prepare("SELECT count(*) AS n FROM messages WHERE session_id = ?")
          .get(own[i]!.id) as {
          n: number;
        };
        expect(mine.n).toBe(perWorker / 3);
      }
      const counter = db
        .prepare("SELECT message_count FROM sessions WHERE id = ?")
        .get(shared.id) as {
        message_count: number;
      };
      expect(counter.message_count).toBe(4 * perWorker);
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    } finally {
      db.close();
    }
  });
});
