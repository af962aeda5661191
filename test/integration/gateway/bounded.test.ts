import { getEventListeners } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { configSchema } from "../../../src/config/schema.js";
import { GatewayMetrics } from "../../../src/gateway/metrics.js";
import { followDrain } from "../../../src/gateway/response-parts.js";
import { buildServer } from "../../../src/gateway/server.js";
import { openStore, type Store } from "../../../src/index.js";
import { GroupCommitter } from "../../../src/turn/group-commit.js";
import { EchoResponder } from "../../../src/turn/responder.js";
import { TurnStop } from "../../../src/turn/stop.js";
import { tempHome } from "../../helpers/home.js";

/**
 * The gateway's long-lived signals collect nothing per turn: a gateway that
 * has served 100,000 turns holds what it held after 1,000 (workload 14 of
 * the benchmark measures the memory; this counts the structure).
 */

/** The WeakRefs Node 20's AbortSignal.any leaves in a source signal (its internal set). */
function dependants(signal: AbortSignal): number {
  const key = Object.getOwnPropertySymbols(signal).find(
    (s) => s.description === "kDependantSignals",
  );
  const set = key
    ? (signal as unknown as Record<symbol, Set<unknown> | undefined>)[key]
    : undefined;
  return set?.size ?? 0;
}

let store: Store | undefined;
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  await store?.close();
  close = undefined;
  store = undefined;
});

describe("gateway: nothing grows per turn", () => {
  it("the draining signal holds no listener and no dependant after 200 turns over 20 sessions", async () => {
    const home = tempHome();
    store = await openStore({ home });
    const config = configSchema().parse({ gateway: { host: "127.0.0.1", port: 0 } });
    const shutdown = new AbortController();
    const draining = new AbortController();
    const app = buildServer(
      {
        runtimes: new Map([
          ["default", { profile: "default", store, committer: new GroupCommitter(store, true) }],
        ]),
        config: () => config,
        responder: () => new EchoResponder(),
        metrics: new GatewayMetrics(),
        shutdown: shutdown.signal,
        draining: draining.signal,
      },
      false,
    );
    const address = await app.listen({ host: "127.0.0.1", port: 0 });
    close = () => app.close();
    const turn = async (chat: number, n: number, stream: boolean) => {
      const res = await fetch(`${address}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ platform: "t", chat: `c${chat}`, content: `m ${n}`, stream }),
      });
      expect(res.status).toBe(200);
      await res.text();
    };
    for (let n = 0; n < 10; n++) {
      await Promise.all(Array.from({ length: 20 }, (_, chat) => turn(chat, n, n % 2 === 1)));
    }
    expect(dependants(draining.signal)).toBe(0);
    expect(getEventListeners(draining.signal, "abort")).toHaveLength(0);
    expect((await store.sessions.list({ limit: 100 })).items).toHaveLength(20);
  });

  it("a turn that starts while the gateway drains is stopped; one that ends lets go of the signal", () => {
    const draining = new AbortController();
    const early = new AbortController();
    const stop = followDrain(draining.signal, early);
    expect(getEventListeners(draining.signal, "abort")).toHaveLength(1);
    stop();
    expect(getEventListeners(draining.signal, "abort")).toHaveLength(0);
    const late = new AbortController();
    followDrain(draining.signal, late);
    draining.abort(new Error("draining"));
    expect(late.signal.aborted).toBe(true);
    expect(early.signal.aborted).toBe(false);
    const after = new AbortController();
    followDrain(draining.signal, after);
    expect(after.signal.aborted).toBe(true);
  });

  it("the turns in flight share one drain listener, gone when the last turn ends; a drain stops each", () => {
    const draining = new AbortController();
    const turns = Array.from({ length: 5 }, () => new TurnStop());
    const leave = turns.map((t) => followDrain(draining.signal, t));
    expect(getEventListeners(draining.signal, "abort")).toHaveLength(1);
    for (const l of leave.slice(0, 4)) l();
    expect(getEventListeners(draining.signal, "abort")).toHaveLength(1);
    leave[4]!();
    expect(getEventListeners(draining.signal, "abort")).toHaveLength(0);

    const live = [new TurnStop(), new TurnStop()];
    const gone = new TurnStop();
    for (const t of live) followDrain(draining.signal, t);
    followDrain(draining.signal, gone)();
    let woken = 0;
    live[0]!.addEventListener("abort", () => woken++);
    draining.abort(new Error("draining"));
    expect(live.map((t) => t.aborted)).toEqual([true, true]);
    expect(gone.aborted).toBe(false);
    expect(woken).toBe(1);
    expect(getEventListeners(draining.signal, "abort")).toHaveLength(0);
  });
});
