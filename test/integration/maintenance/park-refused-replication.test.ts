/**
 * A park refused for a reason other than a loss (calls still in flight
 * past maintenance.maxParkMs: HEARTH_STORE_HELD) leaves the process as it
 * was, its replication included: acceptWindows (src/ops/parking.ts)
 * pauses the replicator before it parks the store, and must resume it
 * when the park is refused, or the profile's replica would fall behind
 * until the process restarted.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { acceptWindows } from "../../../src/ops/parking.js";
import type { ParkServer } from "../../../src/process/park-socket.js";
import { askToPark } from "../../../src/process/park-socket.js";
import { openSqliteStore, tempHome } from "../../helpers/home.js";
import { spawnNode } from "../../helpers/process.js";
import { replicaConfig, replicating } from "../../helpers/replica.js";

const WRITE_BYTE_HOLDER = fileURLToPath(
  new URL("../../fixtures/write-byte-holder.mjs", import.meta.url),
);

const log = { info: () => {}, warn: () => {}, error: () => {} };
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

describe("a park refused because calls are still in flight", () => {
  it("refuses with HEARTH_STORE_HELD, and the replicator ships again afterwards", async () => {
    const home = tempHome();
    const store = await openSqliteStore({
      home,
      config: {
        ...replicaConfig(mkdtempSync(join(tmpdir(), "hearth-target-"))),
        maintenance: { maxParkMs: 300 },
      },
    });
    cleanup.push(() => store.close());
    const session = await store.sessions.create({ title: "park refused" });
    await store.messages.append(session.id, { role: "user", content: "before" });
    const replication = await replicating(store, home);
    cleanup.push(() => replication.stop());
    await replication.tick();
    const shippedBefore = replication.counters()[0]!.frames;
    expect(shippedBefore).toBeGreaterThan(0);
    const server = (await acceptWindows(store, log)) as ParkServer;
    cleanup.push(() => server.close());

    // Another process holds the write byte: this append waits for it, in flight at the door.
    const holder = spawnNode([WRITE_BYTE_HOLDER, join(home, "state.db")]);
    await holder.line((l) => l === "ready");
    const inFlight = store.messages.append(session.id, { role: "user", content: "in flight" });

    const refused = await askToPark(server.path, {
      op: "optimize",
      by: process.pid,
      maxParkMs: 10_000,
    }).then(
      (handle) => {
        handle.release();
        return undefined;
      },
      (err: unknown) => err,
    );
    expect(refused).toMatchObject({ code: "HEARTH_STORE_HELD" });
    expect(String((refused as Error).message)).toMatch(/still running after 300 ms/);
    expect(store.isParked).toBe(false);

    await holder.kill("SIGKILL");
    expect((await inFlight).content).toBe("in flight");
    await store.messages.append(session.id, { role: "assistant", content: "after" });
    // The replicator was paused for the park; refused, it ships what came after.
    await replication.tick();
    expect(replication.statuses()[0]!.lastError).toBeNull();
    expect(replication.counters()[0]!.frames).toBeGreaterThan(shippedBefore);
  });
});
