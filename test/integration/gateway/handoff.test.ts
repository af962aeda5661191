import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../../src/index.js";
import { runCli } from "../../helpers/cli.js";
import { startGateway, writeConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { type Child, spawnNode, until } from "../../helpers/process.js";
import { startWorker } from "../../helpers/worker.js";

const RAW_WRITE_HOLDER = fileURLToPath(
  new URL("../../fixtures/raw-write-holder.mjs", import.meta.url),
);
const sinks = new Set<Sink>();
const stores = new Map<string, Store>();

afterEach(async () => {
  await Promise.all([...sinks].map((s) => s.close()));
  sinks.clear();
  for (const store of stores.values()) await store.close();
  stores.clear();
});

/** `hearth chat` as a real child: `lines` on its stdin, which is then closed; resolves on exit. */
function chat(home: string, lines: string[], args: string[] = []) {
  const input = lines.map((l) => `${l}\n`).join("");
  return runCli(["chat", "--claim-window-ms", "1500", ...args], { home, input });
}

interface SinkRequest {
  path: string;
  body: { profile: string; session: { id: string }; messages: { role: string; content: string }[] };
}
type Answer = (req: SinkRequest, res: ServerResponse) => void;
type Sink = { requests: SinkRequest[]; url: string; answer: Answer; close: () => Promise<void> };

/** A webhook receiver on loopback in this process; `answer` decides each response (or never answers). */
async function sink(answer: Answer): Promise<Sink> {
  const server = createServer((req, res) => {
    const raw: Buffer[] = [];
    req.on("data", (d: Buffer) => raw.push(d));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(raw).toString()) as SinkRequest["body"];
      const request = { path: req.url ?? "", body };
      s.requests.push(request);
      s.answer(request, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const s: Sink = {
    requests: [],
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    answer,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  sinks.add(s);
  return s;
}

/** config.json: handoffPollMs 50 and a webhook adapter per platform, posting to `<sink>/<platform>`. */
function webhooks(home: string, hook: Sink, ...platforms: string[]): void {
  const adapters = Object.fromEntries(
    platforms.map((p) => [p, { kind: "webhook", url: `${hook.url}/${p}` }]),
  );
  writeConfig(home, { gateway: { handoffPollMs: 50, adapters } });
}

/** One store per home and profile, opened in this process and kept until afterEach. */
async function storeOf(home: string, profile = "default"): Promise<Store> {
  const key = `${home}\0${profile}`;
  let store = stores.get(key);
  if (!store) {
    store = await openStore({ home, profile });
    stores.set(key, store);
  }
  return store;
}

const handoff = async (home: string, sid: string, profile = "default") =>
  (await (await storeOf(home, profile)).sessions.get(sid))?.handoff;

/** The session `hearth chat` spoke in (platform cli, chat "terminal" unless given). */
async function chatSession(home: string, chatKey = "terminal"): Promise<string> {
  const { items } = await (await storeOf(home)).sessions.list({ limit: 50 });
  const found = items.filter((s) => s.source === "cli" && s.chatKey === chatKey);
  expect(found).toHaveLength(1);
  return found[0]!.id;
}

/** A session with one message and a pending handoff to `platform`, written through the library. */
async function requestHandoff(home: string, platform: string, profile = "default") {
  const store = await storeOf(home, profile);
  const session = await store.sessions.create({ source: "test" });
  await store.messages.append(session.id, { role: "user", content: `for ${platform}` });
  expect(await store.handoffs.request(session.id, platform)).toBe(true);
  return session.id;
}

describe("handoff (D5) with hearth chat and real gateways", () => {
  it("(a) with no gateway, fails the still-pending handoff after the claim window, exit 1", async () => {
    const home = tempHome();
    const started = Date.now();
    const run = await chat(home, ["hello", "/handoff http"]);
    expect(run.code).toBe(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
    expect(run.stdout).toContain("echo: hello");
    expect(run.stdout).toContain("no gateway is running");
    const state = await handoff(home, await chatSession(home));
    expect(state).toMatchObject({ state: "failed", platform: "http", owner: null });
    expect(state?.error).toContain("within 1500 ms");
  });

  it("(b) with a gateway, /handoff http completes and is listed by GET /v1/handoffs", async () => {
    const home = tempHome();
    writeConfig(home, { gateway: { handoffPollMs: 50 } });
    const gw = await startGateway(home);
    const run = await chat(home, ["hello", "/handoff http"], ["--claim-window-ms", "10000"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("delivered to http");
    const sid = await chatSession(home);
    const state = await handoff(home, sid);
    expect(state).toMatchObject({ state: "completed", platform: "http", error: null });
    expect(state?.owner).toMatch(new RegExp(`^gateway:${gw.pid}:`));
    const completed = await gw.get("/v1/handoffs?state=completed");
    expect(completed.status).toBe(200);
    expect(completed.body.sessions.map((s: { id: string }) => s.id)).toEqual([sid]);
    expect((await gw.get("/v1/handoffs?state=pending")).body.sessions).toEqual([]);
  });

  it("(c) a webhook adapter posts {profile, session, messages}; a 500 fails the handoff", async () => {
    const home = tempHome();
    const hook = await sink((_req, res) => res.writeHead(200).end());
    webhooks(home, hook, "sink");
    await startGateway(home);
    const ok = await chat(home, ["hello", "/handoff sink"], ["--claim-window-ms", "10000"]);
    expect(ok.code).toBe(0);
    const sid = await chatSession(home);
    expect(hook.requests).toHaveLength(1);
    const { path, body } = hook.requests[0]!;
    expect(path).toBe("/sink");
    expect(body.profile).toBe("default");
    expect(body.session.id).toBe(sid);
    expect(body.messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "hello"],
      ["assistant", "echo: hello"],
    ]);
    expect((await handoff(home, sid))?.state).toBe("completed");

    hook.answer = (_req, res) => res.writeHead(500).end("boom");
    const bad = await chat(home, ["bye", "/handoff sink"], ["--chat", "second"]);
    expect(bad.code).toBe(1);
    const second = await chatSession(home, "second");
    expect(hook.requests.map((r) => r.body.session.id)).toEqual([sid, second]);
    const state = await handoff(home, second);
    expect(state).toMatchObject({ state: "failed", error: `${hook.url}/sink answered 500` });
    expect(bad.stdout).toContain(`the handoff failed: ${hook.url}/sink answered 500`);
  });

  it("(d) a waiter never fails a running row; only its owner finishes it", async () => {
    const home = tempHome();
    const sid = await requestHandoff(home, "http");
    const [a, b] = await Promise.all([startWorker(), startWorker()]);
    await Promise.all([a.call("open", { home }), b.call("open", { home })]);
    const op = (w: typeof a, method: string, ...args: unknown[]) =>
      w.call<boolean>("handoff", { method, args });
    expect(await op(a, "claim", sid, "owner-A")).toBe(true);
    expect(await op(b, "failPending", sid, "claim window over")).toBe(false);
    expect(await op(b, "claim", sid, "owner-B")).toBe(false);
    expect(await op(b, "complete", sid, "owner-B")).toBe(false);
    expect(await op(b, "fail", sid, "owner-B", "not mine")).toBe(false);
    expect(await op(b, "request", sid, "http")).toBe(false);
    expect(await handoff(home, sid)).toMatchObject({
      state: "running",
      owner: "owner-A",
      error: null,
    });
    expect(await op(a, "complete", sid, "owner-A")).toBe(true);
    expect((await handoff(home, sid))?.state).toBe("completed");
    expect(await op(b, "request", sid, "http")).toBe(true);
    expect(await op(b, "claim", sid, "owner-B")).toBe(true);
    expect(await op(a, "fail", sid, "owner-A", "not mine")).toBe(false);
    expect(await op(b, "fail", sid, "owner-B", "webhook down")).toBe(true);
    expect(await handoff(home, sid)).toMatchObject({ state: "failed", error: "webhook down" });

    // Through the real CLI: a claimer that never finishes; the CLI gives up waiting but leaves it running.
    const claimed = a.call<string>("claimNextPending", { owner: "slow-owner", timeoutMs: 10_000 });
    const run = await chat(home, ["hi", "/handoff http"], ["--dispatch-timeout-ms", "1000"]);
    const csid = await chatSession(home);
    expect(await claimed).toBe(csid);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("still being delivered by slow-owner");
    expect(await handoff(home, csid)).toMatchObject({ state: "running", owner: "slow-owner" });
  });

  it("(d) racing processes: exactly one claimer wins, and claim vs failPending has one winner", async () => {
    const home = tempHome();
    const store = await storeOf(home);
    const sid = (await store.sessions.create({ source: "test" })).id;
    const workers = await Promise.all([startWorker(), startWorker()]);
    await Promise.all(workers.map((w) => w.call("open", { home })));
    for (let round = 0; round < 20; round++) {
      expect(await store.handoffs.request(sid, "http")).toBe(true);
      const at = Date.now() + 30;
      const claims = await Promise.all(
        workers.map((w, i) =>
          w.call<boolean>("handoff", { method: "claim", args: [sid, `owner-${i}`], at }),
        ),
      );
      expect(claims.filter(Boolean)).toHaveLength(1);
      const winner = claims.indexOf(true);
      expect((await handoff(home, sid))?.owner).toBe(`owner-${winner}`);
      expect(await store.handoffs.complete(sid, `owner-${winner}`)).toBe(true);

      // The CLI's claim timeout against a slow claim, at the same moment.
      expect(await store.handoffs.request(sid, "http")).toBe(true);
      const at2 = Date.now() + 30;
      const [claim, failPending] = await Promise.all([
        workers[0]!.call<boolean>("handoff", { method: "claim", args: [sid, "gw"], at: at2 }),
        workers[1]!.call<boolean>("handoff", {
          method: "failPending",
          args: [sid, "late"],
          at: at2,
        }),
      ]);
      expect(claim).not.toBe(failPending);
      const state = await handoff(home, sid);
      if (claim) {
        expect(state).toMatchObject({ state: "running", owner: "gw", error: null });
        expect(await store.handoffs.fail(sid, "gw", "done")).toBe(true);
      } else expect(state).toMatchObject({ state: "failed", error: "late", owner: null });
    }
  });

  it("(e) a new gateway fails a running row of a dead gateway at start and never re-delivers it", async () => {
    const home = tempHome();
    const hook = await sink((req, res) => {
      if (req.path === "/ok") res.writeHead(200).end(); // "/hang" is never answered
    });
    webhooks(home, hook, "hang", "ok");
    const first = await startGateway(home);
    const stuck = await requestHandoff(home, "hang");
    await until("the delivery reached the sink", () => hook.requests.length === 1);
    const running = await handoff(home, stuck);
    expect(running?.state).toBe("running");
    expect(running?.owner).toMatch(new RegExp(`^gateway:${first.pid}:`));
    expect(await first.kill("SIGKILL")).toMatchObject({ signal: "SIGKILL" });

    const second = await startGateway(home);
    const failed = await handoff(home, stuck);
    expect(failed).toMatchObject({ state: "failed", owner: running?.owner });
    expect(failed?.error).toContain("not retried");
    expect(second.logEvents("handoff.orphans_failed")[0]?.sessions).toEqual([stuck]);
    // Proof the new watcher has polled since: a later handoff goes through it.
    const later = await requestHandoff(home, "ok");
    await until("the later handoff completed", async () => {
      return (await handoff(home, later))?.state === "completed";
    });
    expect(hook.requests.map((r) => [r.path, r.body.session.id])).toEqual([
      ["/hang", stuck],
      ["/ok", later],
    ]);
    expect((await handoff(home, stuck))?.state).toBe("failed");
  });

  it("(f) a slow handoff in profile a never delays profile b", async () => {
    const home = tempHome();
    // a's delivery gets no answer until b's handoff has completed (a hold, not a time).
    let answerSlow: () => void = () => {};
    const hook = await sink((req, res) => {
      if (req.path === "/slow") answerSlow = () => res.writeHead(200).end();
      else res.writeHead(200).end();
    });
    webhooks(home, hook, "slow", "fast");
    await startGateway(home, { profiles: ["a", "b"] });
    const slow = await requestHandoff(home, "slow", "a");
    await until("a's delivery reached the sink", () => hook.requests.length === 1);
    const fast = await requestHandoff(home, "fast", "b");
    await until("b's handoff completed", async () => {
      return (await handoff(home, fast, "b"))?.state === "completed";
    });
    // b went through while a's delivery was still waiting for its answer.
    expect((await handoff(home, slow, "a"))?.state).toBe("running");
    answerSlow();
    await until("a's handoff completed", async () => {
      return (await handoff(home, slow, "a"))?.state === "completed";
    });
    expect(hook.requests.map((r) => [r.path, r.body.profile, r.body.session.id])).toEqual([
      ["/slow", "a", slow],
      ["/fast", "b", fast],
    ]);
  });

  // A long-running gateway collects garbage all the time; these force it
  // every 100 ms so the outcome does not depend on when a collection runs.
  const GC_OFTEN = "--expose-gc --import=data:text/javascript,setInterval(gc,100).unref()";

  it("(g) a webhook that never answers fails on the adapter's timeoutMs, whatever the GC does", async () => {
    const home = tempHome();
    const hook = await sink(() => undefined); // never answers
    const hang = { kind: "webhook", url: `${hook.url}/hang`, timeoutMs: 1000 };
    writeConfig(home, { gateway: { handoffPollMs: 50, adapters: { hang } } });
    await startGateway(home, { env: { NODE_OPTIONS: GC_OFTEN } });
    const sid = await requestHandoff(home, "hang");
    await until("the delivery reached the sink", () => hook.requests.length === 1);
    await until(
      "the handoff failed on its timeout",
      async () => (await handoff(home, sid))?.state === "failed",
      6000,
    );
    expect((await handoff(home, sid))?.error).toMatch(/timed? ?out/i);
  });

  it("(h) SIGTERM while a delivery hangs: the gateway still exits after drainMs, never re-queuing", async () => {
    const home = tempHome();
    const hook = await sink(() => undefined); // never answers
    const hang = { kind: "webhook", url: `${hook.url}/hang`, timeoutMs: 60_000 };
    writeConfig(home, { gateway: { handoffPollMs: 50, drainMs: 500, adapters: { hang } } });
    const gw = await startGateway(home);
    const sid = await requestHandoff(home, "hang");
    await until("the delivery reached the sink", () => hook.requests.length === 1);
    gw.child.kill("SIGTERM");
    // The bound is the delivery's own timeout, not a guess at how fast the
    // machine is: exiting within half of it means drainMs ended the wait.
    let deadline: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      gw.exited,
      new Promise((resolve) => {
        deadline = setTimeout(() => resolve("still running 30 s after SIGTERM"), 30_000);
      }),
    ]);
    clearTimeout(deadline);
    expect(outcome).toEqual({ code: 0, signal: null });
    expect(gw.events.map((e) => e.event)).toEqual(["gateway.ready", "gateway.stopped"]);
    expect(["running", "failed"]).toContain((await handoff(home, sid))?.state);
    expect(hook.requests).toHaveLength(1);
  });
  it("(i) a handoff whose fail() itself fails still reaches a final state, logged at warn", async () => {
    const home = tempHome();
    const holders: Child[] = [];
    let db = "";
    let locked: Promise<void> = Promise.resolve();
    // The webhook fails, but first a process that is not hearth takes SQLite's write lock,
    // so the gateway's own fail() is refused (HEARTH_BUSY) when it tries to record that.
    const hook = await sink((_req, res) => {
      const holder = spawnNode([RAW_WRITE_HOLDER, db, "forever"]);
      holders.push(holder);
      locked = holder.line((l) => l.includes('"locked"')).then(() => undefined);
      void locked.then(() => res.writeHead(500).end("boom"));
    });
    const boom = { kind: "webhook", url: `${hook.url}/boom` };
    writeConfig(home, {
      store: { busyTimeoutMs: 200 },
      gateway: { handoffPollMs: 50, adapters: { boom } },
    });
    const gw = await startGateway(home);
    db = gw.path;
    const sid = await requestHandoff(home, "boom");
    await until("the gateway tried to fail the handoff and could not", () =>
      gw.logEvents("handoff.settle_failed").some((e) => e.outcome === "failed"),
    );
    const warned = gw.logEvents("handoff.settle_failed")[0]!;
    expect(warned).toMatchObject({ level: 40, session: sid });
    expect((await handoff(home, sid))?.state).toBe("running");
    // The foreign writer lets go: the gateway writes the outcome it kept.
    holders[0]!.child.stdin.write("\n");
    await until("the handoff reached its final state", async () => {
      return (await handoff(home, sid))?.state === "failed";
    });
    expect((await handoff(home, sid))?.error).toBe(`${hook.url}/boom answered 500`);
    // The gateway logs once its write is acknowledged, which is after another
    // process can already read it (its WAL fsync comes between: durability.md).
    await until("the gateway logged the failure", () => gw.logEvents("handoff.failed").length > 0);
    expect(gw.logEvents("handoff.failed")).toHaveLength(1);
  });
});
