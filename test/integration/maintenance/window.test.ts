import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { runCli } from "../../helpers/cli.js";
import { startDashboard, stopDashboards } from "../../helpers/dashboard.js";
import {
  type GatewayChild,
  spawnGateway,
  startGateway,
  withStore,
  writeConfig,
} from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { spawnNode, until } from "../../helpers/process.js";
import { startWorker } from "../../helpers/worker.js";

const OFD_HOLDER = new URL("../../fixtures/ofd-holder.mjs", import.meta.url).pathname;

/** A store with rows and free pages (so VACUUM has work), then a gateway on it. */
async function liveStore(config: Record<string, unknown> = {}) {
  const home = tempHome();
  writeConfig(home, config);
  const store = await openStore({ home });
  const s = await store.sessions.create({ title: "bulk" });
  await store.messages.appendBatch(
    s.id,
    Array.from({ length: 300 }, (_, i) => ({
      role: "user" as const,
      content: `x${i} ${"y".repeat(200)}`,
    })),
  );
  await store.sessions.delete(s.id);
  await store.close();
  const gw = await startGateway(home);
  return { home, gw };
}

async function roles(home: string, pid: number): Promise<string[]> {
  const ps = await runCli(["--json", "ps"], { home });
  const h = ps.json().profiles[0].holders.find((x: { pid: number }) => x.pid === pid);
  return h ? [...h.roles].sort() : [];
}

interface Sent {
  clientId: string;
  status: number;
  started: number;
  ended: number;
}

/** Post messages one after another until `stop()` says so (at most 2,000); every answer recorded. */
async function client(gw: GatewayChild, name: string, stop: () => boolean): Promise<Sent[]> {
  const sent: Sent[] = [];
  for (let i = 0; i < 2000 && !stop(); i++) {
    const clientId = `${name}-${i}`;
    const started = performance.now();
    const r = await gw.post({ platform: "t", chat: name, content: `${name} ${i}`, clientId });
    sent.push({ clientId, status: r.status, started, ended: performance.now() });
  }
  return sent;
}

describe("maintenance windows (M5)", () => {
  it("optimize --window parks a live gateway under load, runs, resumes it: no error, nothing lost", async () => {
    const { home, gw } = await liveStore();
    // Without a window, structural work refuses while the gateway lives (P4).
    expect((await runCli(["sessions", "optimize"], { home })).code).toBe(3);

    let done = false;
    const load = Promise.all([client(gw, "a", () => done), client(gw, "b", () => done)]);
    await until(
      "the load is running",
      async () => (await withStore(home, (s) => s.counts())).messages > 4,
    );
    const windowStart = performance.now();
    const r = await runCli(["--json", "sessions", "optimize", "--window"], { home });
    const windowEnd = performance.now();
    done = true;
    expect(r.code, r.stderr).toBe(0);
    const result = r.json();
    expect(result.window.parked).toEqual([gw.pid]);
    expect(result.steps.find((s: { step: string }) => s.step === "vacuum").done).toBe(true);

    const sent = (await load).flat();
    expect(sent.filter((x) => x.status !== 200)).toEqual([]);
    // Requests were in flight during the window, and were answered, not refused.
    expect(
      sent.filter((x) => x.ended > windowStart && x.started < windowEnd).length,
    ).toBeGreaterThan(2);
    const stored = await withStore(home, async (s) => {
      const ids = new Set<string>();
      for (const session of (await s.sessions.list({ limit: 10 })).items)
        for (const m of await s.messages.load(session.id)) if (m.clientId) ids.add(m.clientId);
      return ids;
    });
    for (const x of sent) expect(stored.has(x.clientId), x.clientId).toBe(true);
    expect(gw.logEvents("window.parked")).toHaveLength(1);
    await until("the gateway resumed", () => gw.logEvents("window.resumed").length === 1);
    expect(await roles(home, gw.pid)).toEqual(["reader", "writer"]);
    expect((await withStore(home, (s) => s.quickCheck())).ok).toBe(true);
  });

  it("refuses, naming it, when a holder does not park in time (SIGSTOP), and leaves it serving", async () => {
    const { home, gw } = await liveStore({ maintenance: { maxParkMs: 500 } });
    process.kill(gw.pid, "SIGSTOP");
    let r: Awaited<ReturnType<typeof runCli>>;
    try {
      r = await runCli(["--json", "sessions", "optimize", "--window"], { home });
    } finally {
      process.kill(gw.pid, "SIGCONT");
    }
    expect(r.code).toBe(3);
    const error = JSON.parse(r.stderr).error;
    expect(error.code).toBe("HEARTH_STORE_HELD");
    expect(error.details.holders[0]).toMatchObject({ pid: gw.pid });
    expect(error.details.holders[0].why).toContain("did not park within 500 ms");
    // It may park and resume once it runs again; it serves either way.
    const after = await gw.post({ platform: "t", chat: "c", content: "still here" });
    expect(after.status).toBe(200);
    await until("the gateway is a writer again", async () =>
      (await roles(home, gw.pid)).includes("writer"),
    );
  });

  it("refuses, naming them, when a holder takes no park requests or is not hearth; nobody stays parked", async () => {
    const { home, gw } = await liveStore();
    const library = await startWorker();
    await library.call("open", { home });
    const r = await runCli(["--json", "sessions", "optimize", "--window"], { home });
    expect(r.code).toBe(3);
    const held = JSON.parse(r.stderr).error.details.holders;
    expect(held).toEqual([
      expect.objectContaining({
        pid: library.pid,
        why: expect.stringContaining("takes no park requests"),
      }),
    ]);
    await library.call("close");

    const foreign = spawnNode([OFD_HOLDER, gw.path]);
    await foreign.line((l) => l === "ready");
    const r2 = await runCli(["--json", "sessions", "optimize", "--window"], { home });
    expect(r2.code).toBe(3);
    expect(JSON.parse(r2.stderr).error.details.holders).toEqual([
      expect.objectContaining({ pid: foreign.pid, why: "is not a hearth process" }),
    ]);
    expect(gw.logEvents("window.parked")).toEqual([]);
    expect(await roles(home, gw.pid)).toEqual(["reader", "writer"]);
    expect((await gw.post({ platform: "t", chat: "c", content: "fine" })).status).toBe(200);
  });
  it("parks the gateway and the dashboard together; both serve again after the window", async () => {
    const { home, gw } = await liveStore();
    const dash = await startDashboard(home);
    const browser = await dash.logIn();
    try {
      const r = await runCli(["--json", "sessions", "optimize", "--window"], { home });
      expect(r.code, r.stderr).toBe(0);
      expect([...r.json().window.parked].sort()).toEqual([gw.pid, dash.pid].sort());
      expect((await gw.post({ platform: "t", chat: "d", content: "after" })).status).toBe(200);
      await until("the dashboard lists the new session", async () => {
        const list = await browser.api("GET", "/api/sessions");
        return list.status === 200 && JSON.stringify(list.body).includes('"chatKey":"d"');
      });
    } finally {
      await stopDashboards();
    }
  });
  it("restore --window replaces the store under a live gateway, which resumes on the restored file", async () => {
    const home = tempHome();
    const before = await openStore({ home });
    const kept = await before.sessions.create({ title: "in the backup" });
    await before.close();
    const backup = await runCli(["--json", "backup"], { home });
    expect(backup.code, backup.stderr).toBe(0);
    const gw = await startGateway(home);
    const lost = await gw.post({
      platform: "t",
      chat: "after-backup",
      content: "not in the backup",
    });
    expect(lost.status).toBe(200);

    const r = await runCli(["--json", "restore", backup.json().path, "--yes", "--window"], {
      home,
    });
    expect(r.code, r.stderr).toBe(0);
    // The JSON says who parked, as optimize --window's does (the torture run checks it).
    expect(r.json().window).toEqual({ parked: [gw.pid] });
    await until("the gateway resumed", () => gw.logEvents("window.resumed").length === 1);
    // It serves the restored store: what it wrote after the backup is gone, new writes land.
    const next = await gw.post({
      platform: "t",
      chat: "after-restore",
      content: "on the restored file",
    });
    expect(next.status).toBe(200);
    const titles = await withStore(home, async (s) =>
      (await s.sessions.list()).items.map((x) => x.chatKey ?? x.title),
    );
    expect(titles.sort()).toEqual(["after-restore", kept.title].sort());
    // Its locks moved to the new file: named by ps, and still the one gateway (P3).
    expect(await roles(home, gw.pid)).toEqual(["reader", "writer"]);
    const second = spawnGateway(home);
    expect((await second.exited).code).toBe(78);
    expect((await withStore(home, (s) => s.quickCheck())).ok).toBe(true);
  });

  it("repair --window parks a live gateway and says so in its JSON", async () => {
    const home = tempHome();
    const gw = await startGateway(home);
    expect((await gw.post({ platform: "t", chat: "r", content: "before" })).status).toBe(200);
    const r = await runCli(["--json", "sessions", "repair", "--window"], { home });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ strategy: "none", window: { parked: [gw.pid] } });
    await until("the gateway resumed", () => gw.logEvents("window.resumed").length === 1);
    expect((await gw.post({ platform: "t", chat: "r", content: "after" })).status).toBe(200);
  });
});
