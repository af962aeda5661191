import { existsSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { gatewayRecordPath } from "../../../src/process/gateway-lock.js";
import {
  type ApiResponse,
  answerJson,
  closeFakes,
  type GatewayChild,
  spawnGateway,
  startFakeOpenAi,
  startGateway,
  withStore,
  writeConfig,
} from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { until } from "../../helpers/process.js";

afterEach(closeFakes);

const recordPath = (home: string) => gatewayRecordPath(home, "default");

const openai = (baseUrl: string) => ({ kind: "openai", baseUrl, model: "m", stream: false });

/** A fake endpoint that answers after `ms` (or never, with Infinity). */
async function slowFake(ms: number) {
  const timers = new Set<NodeJS.Timeout>();
  const fake = await startFakeOpenAi((_req, res) => {
    if (ms === Number.POSITIVE_INFINITY) return;
    const t = setTimeout(() => answerJson(res, "slow answer"), ms);
    timers.add(t);
  });
  return { fake, stop: () => timers.forEach(clearTimeout) };
}

const session = (gw: GatewayChild, id: string) => gw.get(`/v1/sessions/${id}`);

describe("gateway durability (D1), shutdown, reload and turn leases", () => {
  it("keeps every acknowledged message and reply across kill -9, and resumes the sessions", async () => {
    const home = tempHome();
    writeConfig(home, { durability: { synchronous: "full" }, gateway: { turnWaitMs: 100 } });
    const first = await startGateway(home);
    const acked: ApiResponse["body"][] = [];
    const killAt = 25;
    // 10 clients, each its own chat, sending until the gateway dies.
    await Promise.all(
      Array.from({ length: 10 }, async (_, c) => {
        for (let i = 0; ; i++) {
          let res: ApiResponse;
          try {
            res = await first.post({
              platform: "crash",
              chat: `c${c}`,
              content: `c${c}-m${i}`,
              clientId: `c${c}-${i}`,
            });
          } catch {
            return; // the gateway is gone: this request was never acknowledged
          }
          if (res.status !== 200) return;
          acked.push(res.body);
          if (acked.length === killAt) first.child.kill("SIGKILL");
        }
      }),
    );
    const { signal } = await first.exited;
    expect(signal).toBe("SIGKILL");
    expect(acked.length).toBeGreaterThanOrEqual(killAt);

    const second = await startGateway(home);
    const sessions = new Map<string, { id: number; content: unknown }[]>();
    for (const a of acked) {
      if (!sessions.has(a.session.id)) {
        const shown = await session(second, a.session.id);
        expect(shown.status).toBe(200);
        sessions.set(a.session.id, shown.body.messages);
      }
      const stored = sessions.get(a.session.id)!;
      expect(stored).toContainEqual(
        expect.objectContaining({ id: a.message.id, content: a.message.content }),
      );
      expect(stored).toContainEqual(
        expect.objectContaining({ id: a.reply.id, content: `echo: ${a.message.content}` }),
      );
    }
    await withStore(home, async (s) =>
      expect(await s.quickCheck()).toEqual({ ok: true, problems: [] }),
    );

    // Resume: each chat continues its own session, right after what is stored,
    // even where the dead gateway held a turn lease (turnWaitMs is only 100 ms).
    for (const [id, stored] of sessions) {
      const chat = acked.find((a) => a.session.id === id).session.chatKey as string;
      const next = await second.post({ platform: "crash", chat, content: "after the crash" });
      expect(next.status).toBe(200);
      expect(next.body.session.id).toBe(id);
      expect(next.body.message.ordinal).toBe(stored.length);
    }
  });

  it("resumes the same session after a clean restart", async () => {
    const home = tempHome();
    writeConfig(home, {});
    const a = await startGateway(home);
    const before = await a.post({ platform: "web", chat: "r", content: "one" });
    expect(await a.kill("SIGTERM")).toEqual({ code: 0, signal: null });
    const b = await startGateway(home);
    const after = await b.post({ platform: "web", chat: "r", content: "two" });
    expect(after.body.session.id).toBe(before.body.session.id);
    expect(after.body.message.ordinal).toBe(2);
    const shown = await session(b, before.body.session.id);
    expect(shown.body.messages.map((m: { content: string }) => m.content)).toEqual([
      "one",
      "echo: one",
      "two",
      "echo: two",
    ]);
  });

  it("SIGTERM lets in-flight turns finish, then exits 0 with gateway.stopped", async () => {
    const { fake } = await slowFake(500);
    const home = tempHome();
    // A long drain bound: the gateway must stop when its turns are done, not when time runs out.
    writeConfig(home, { gateway: { responder: openai(fake.baseUrl), drainMs: 30_000 } });
    const gw = await startGateway(home);
    const inFlight = Array.from({ length: 5 }, (_, i) =>
      gw.post({ platform: "web", chat: `t${i}`, content: `turn ${i}` }),
    );
    await until("5 turns at the responder", () => fake.requests.length === 5);
    gw.child.kill("SIGTERM");
    const results = await Promise.all(inFlight);
    expect(results.map((r) => [r.status, r.body.reply?.content])).toEqual(
      Array(5).fill([200, "slow answer"]),
    );
    // The clients keep their connections alive (fetch does): that must not hold
    // the exit. The bound is half the drain bound, not a guess at how fast the
    // machine is: an exit within it was not the drain running out.
    const exit = await Promise.race([
      gw.exited,
      new Promise((r) => setTimeout(r, 15_000, "still running 15 s after its turns finished")),
    ]);
    expect({ exit, events: gw.events.map((e) => e.event) }).toEqual({
      exit: { code: 0, signal: null },
      events: ["gateway.ready", "gateway.stopped"],
    });
    await withStore(home, async (s) => expect((await s.counts()).messages).toBe(10));
  });

  it("SIGTERM past drainMs cancels the turn still running and commits its hearth.turn_cancelled before the store closes", async () => {
    const { fake } = await slowFake(Number.POSITIVE_INFINITY);
    const home = tempHome();
    writeConfig(home, { gateway: { responder: openai(fake.baseUrl), drainMs: 300 } });
    const gw = await startGateway(home);
    const turn = gw.post({ platform: "web", chat: "long", content: "never answered" });
    await until("the turn at the responder", () => fake.requests.length === 1);
    gw.child.kill("SIGTERM");
    const answer = await turn;
    expect(answer.body.error?.code).toBe("HEARTH_TURN_CANCELLED");
    expect((await gw.exited).code).toBe(0);
    const names = await withStore(home, async (s) => {
      const [only] = (await s.sessions.list()).items;
      return (await s.messages.load(only!.id)).map((m) => m.name ?? m.role);
    });
    expect(names).toEqual(["user", "hearth.turn_cancelled"]);
  });

  it("a start that finds its predecessor draining waits for it, then serves (a restart is not refused 78)", async () => {
    const { fake } = await slowFake(Number.POSITIVE_INFINITY);
    const home = tempHome();
    writeConfig(home, { gateway: { responder: openai(fake.baseUrl), drainMs: 1_500 } });
    const first = await startGateway(home);
    const turn = first.post({ platform: "web", chat: "long", content: "still thinking" });
    await until("the turn at the responder", () => fake.requests.length === 1);
    first.child.kill("SIGTERM");
    await until(
      "the record says it drains",
      () =>
        existsSync(recordPath(home)) &&
        "drainingUntil" in JSON.parse(readFileSync(recordPath(home), "utf8")),
    );
    const second = spawnGateway(home);
    await second.ready; // rejects if it exits 78 instead of waiting
    expect((await first.exited).code).toBe(0);
    expect((await turn).body.error?.code).toBe("HEARTH_TURN_CANCELLED");
    expect((await second.get("/v1/health")).status).toBe(200);
    await second.kill("SIGTERM");
  });

  it("SIGHUP reloads config.json: echo, then the openai responder; a bad file keeps the old one", async () => {
    const fake = await startFakeOpenAi((_req, res) => answerJson(res, "from the fake"));
    const home = tempHome();
    writeConfig(home, {});
    const gw = await startGateway(home);
    expect((await gw.get("/v1/health")).body.responder).toBe("echo");
    expect((await gw.post({ platform: "p", chat: "c", content: "a" })).body.reply.content).toBe(
      "echo: a",
    );

    writeConfig(home, { gateway: { responder: openai(fake.baseUrl) } });
    gw.child.kill("SIGHUP");
    await until(
      "the openai responder",
      async () => (await gw.get("/v1/health")).body.responder === "openai",
    );
    expect(gw.logEvents("gateway.reloaded")).toHaveLength(1);
    const next = await gw.post({ platform: "p", chat: "c", content: "b" });
    expect(next.body.reply.content).toBe("from the fake");
    expect(fake.requests).toHaveLength(1);

    writeConfig(home, { gateway: { responder: { kind: "telepathy" } } });
    gw.child.kill("SIGHUP");
    await until(
      "the reload failure in the log",
      () => gw.logEvents("gateway.reload_failed").length === 1,
    );
    expect((await gw.get("/v1/health")).body.responder).toBe("openai");
    expect((await gw.post({ platform: "p", chat: "c", content: "c" })).body.reply.content).toBe(
      "from the fake",
    );
    expect(gw.child.exitCode).toBeNull();
  });

  it("a second turn on a busy session gets 409 HEARTH_TURN_BUSY while the first succeeds", async () => {
    const { fake } = await slowFake(500);
    const home = tempHome();
    writeConfig(home, { gateway: { responder: openai(fake.baseUrl), turnWaitMs: 100 } });
    const gw = await startGateway(home);
    const firstTurn = gw.post({ platform: "web", chat: "busy", content: "first" });
    await until("the first turn at the responder", () => fake.requests.length === 1);
    const second = await gw.post({ platform: "web", chat: "busy", content: "second" });
    expect(second.status).toBe(409);
    expect(second.body.error.code).toBe("HEARTH_TURN_BUSY");
    expect(second.body.error.message).toContain(`pid ${gw.pid}`);
    const first = await firstTurn;
    expect(first.status).toBe(200);
    // The refused message was not stored; the lease was released after the turn.
    const shown = await session(gw, first.body.session.id);
    expect(shown.body.messages.map((m: { content: string }) => m.content)).toEqual([
      "first",
      "slow answer",
    ]);
    expect((await gw.post({ platform: "web", chat: "busy", content: "third" })).status).toBe(200);
    expect(fake.requests).toHaveLength(2);
  });

  it("takes over the turn lease of a gateway killed mid-turn", async () => {
    const hang = await slowFake(Number.POSITIVE_INFINITY);
    const home = tempHome();
    writeConfig(home, { gateway: { responder: openai(hang.fake.baseUrl), turnWaitMs: 100 } });
    const dead = await startGateway(home);
    const lost = dead
      .post({ platform: "web", chat: "t", content: "interrupted" })
      .catch(() => "gone");
    await until("the turn at the responder", () => hang.fake.requests.length === 1);
    const sid = await withStore(home, async (s) => (await s.sessions.list()).items[0]!.id);
    dead.child.kill("SIGKILL");
    await dead.exited;
    expect(await lost).toBe("gone");
    const lease = await withStore(home, (s) => s.meta.get(`turn-lease:${sid}`));
    expect(JSON.parse(lease!).holder.pid).toBe(dead.pid);

    hang.fake.handler = (_req, res) => answerJson(res, "fresh");
    const gw = await startGateway(home);
    const started = Date.now();
    const next = await gw.post({ platform: "web", chat: "t", content: "retry" });
    expect({ status: next.status, code: next.body.error?.code }).toEqual({
      status: 200,
      code: undefined,
    });
    // At once, not when the lease expired (leaseMs, 120 s by default).
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(next.body.session.id).toBe(sid);
    const shown = await session(gw, sid);
    expect(shown.body.messages.map((m: { content: string }) => m.content)).toEqual([
      "interrupted",
      "retry",
      "fresh",
    ]);
    expect(await withStore(home, (s) => s.meta.get(`turn-lease:${sid}`))).toBeNull();
  });
});
