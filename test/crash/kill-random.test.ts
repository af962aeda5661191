import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/index.js";
import { spawnGateway } from "../helpers/gateway.js";
import { tempHome } from "../helpers/home.js";
import { startWorker, type Worker } from "../helpers/worker.js";

function storedClientIds(path: string, sessionId: string): Set<string> {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db
      .prepare("SELECT client_id FROM messages WHERE session_id = ?")
      .all(sessionId) as { client_id: string }[];
    return new Set(rows.map((r) => r.client_id));
  } finally {
    db.close();
  }
}

const runFiles = (home: string) => readdirSync(join(home, "run"));
const recordPid = (home: string) =>
  (JSON.parse(readFileSync(join(home, "run", "gateway.json"), "utf8")) as { pid: number }).pid;

describe("kill -9 at random points", () => {
  it("never leaves a lock or marker that blocks the next writer, gateway or structural operation", async () => {
    const home = tempHome();
    const setup = await openStore({ home });
    const session = await setup.sessions.create({ title: "crash" });
    const path = setup.path;
    await setup.close();

    let worker: Worker = await startWorker();
    await worker.call("open", { home });
    let gateway = spawnGateway(home);
    await gateway.ready;
    const acked: string[] = [];
    const rounds = 10;
    for (let round = 0; round < rounds; round++) {
      const mode = round % 3;
      if (mode === 2) {
        // The worker dies in the middle of a structural operation (holding the
        // gate exclusive), with a gateway starting up behind it.
        await gateway.kill();
        await worker.call("beginSurgery");
        gateway = spawnGateway(home);
      } else {
        void worker
          .call("appendLoop", { sessionId: session.id, forever: true, prefix: `r${round}` })
          .catch(() => {});
        if (mode === 1) {
          // The victim gateway is one still starting up when the kill comes.
          await gateway.kill();
          gateway = spawnGateway(home);
        }
        // Kill at a point chosen by the number of commits, never by a clock.
        await worker.waitForAcks(1 + Math.floor(Math.random() * 300));
      }
      const gatewayWasReady = gateway.isReady;
      await Promise.all([worker.kill("SIGKILL"), gateway.kill()]);
      acked.push(...worker.acks);

      // Every acknowledged append survived.
      const stored = storedClientIds(path, session.id);
      expect(acked.filter((id) => !stored.has(id))).toEqual([]);
      // The dead processes left their informational files behind.
      expect(runFiles(home).some((f) => f.startsWith(`${worker.pid}-`))).toBe(true);
      if (gatewayWasReady) expect(recordPid(home)).toBe(gateway.pid);

      // A new writer opens on the first try ...
      worker = await startWorker();
      await worker.call("open", { home });
      // ... can run a structural operation (no stale lock holds the gate) ...
      await worker.call("beginSurgery");
      await worker.call("endSurgery");
      // ... and a new gateway becomes ready on the first try.
      gateway = spawnGateway(home);
      await gateway.ready;
      expect(recordPid(home)).toBe(gateway.pid);
      // The stale markers were swept: only the live processes have one.
      const marked = runFiles(home)
        .filter((f) => /^\d+-\d+\.json$/.test(f))
        .map((f) => Number(f.split("-")[0]));
      expect(marked.sort()).toEqual([worker.pid, gateway.pid].sort());
    }
    console.log(`${rounds} rounds, ${acked.length} acknowledged appends across the kills`);

    await Promise.all([worker.kill("SIGKILL"), gateway.kill()]);
    const after = await openStore({ home });
    const messages = await after.messages.load(session.id);
    const ids = new Set(messages.map((m) => m.clientId));
    expect(acked.filter((id) => !ids.has(id))).toEqual([]);
    expect(messages.map((m) => m.ordinal)).toEqual(messages.map((_, i) => i));
    expect(await after.quickCheck()).toEqual({ ok: true, problems: [] });
    await after.close();
    // Ten rounds of two process starts each and their kills: 8 s on an idle
    // machine, past the default 60 s beside a CPU hog (a hog run timed out so,
    // in round 10); the bound is for the work, not a speed.
  }, 240_000);
});
