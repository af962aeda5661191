import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/index.js";
import { tempHome } from "../helpers/home.js";
import { startWorker } from "../helpers/worker.js";

describe("kill -9 in the middle of appending (D1)", () => {
  for (const synchronous of ["full", "normal"] as const) {
    it(`keeps every acknowledged message (synchronous=${synchronous})`, async () => {
      const home = tempHome();
      const setup = await openStore({ home });
      const session = await setup.sessions.create({ title: "crash" });
      await setup.close();

      for (let round = 0; round < 4; round++) {
        const worker = await startWorker();
        await worker.call("open", { home, config: { durability: { synchronous } } });
        void worker
          .call("appendLoop", { sessionId: session.id, forever: true, prefix: `r${round}` })
          .catch(() => {});
        // Kill at a different point each round, while appends are in flight.
        await worker.waitForAcks(20 + Math.floor(Math.random() * 200));
        await worker.kill("SIGKILL");
        const acked = [...worker.acks];

        const db = new Database(setup.path, { readonly: true });
        try {
          const stored = new Set(
            (
              db.prepare("SELECT client_id FROM messages WHERE session_id = ?").all(session.id) as {
                client_id: string;
              }[]
            ).map((r) => r.client_id),
          );
          const lost = acked.filter((id) => !stored.has(id));
          expect(lost).toEqual([]);
          expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
        } finally {
          db.close();
        }
      }
      // The store opens cleanly after the crashes and keeps ordinals dense.
      const after = await openStore({ home });
      const messages = await after.messages.load(session.id);
      expect(messages.map((m) => m.ordinal)).toEqual(messages.map((_, i) => i));
      await after.close();
    });
  }
});
