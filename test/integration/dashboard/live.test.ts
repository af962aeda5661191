import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runPs } from "../../../src/index.js";
import { runCli } from "../../helpers/cli.js";
import { SseReader, startDashboard, stopDashboards } from "../../helpers/dashboard.js";
import { startGateway, withStore, writeConfig } from "../../helpers/gateway.js";
import { cleanupHomes, tempHome } from "../../helpers/home.js";
import { until } from "../../helpers/process.js";

const readers: SseReader[] = [];
afterEach(async () => {
  for (const r of readers.splice(0)) r.close();
  await stopDashboards();
  cleanupHomes();
});

describe("dashboard beside a real gateway on one store", () => {
  it("shows a message the gateway commits in the API and on the live stream, and hearth ps names the dashboard", async () => {
    const home = tempHome();
    const gw = await startGateway(home);
    const dash = await startDashboard(home);
    const browser = await dash.logIn();

    // A session exists; one stream watches it, one watches another session, one watches none.
    const first = await gw.post({ platform: "telegram", chat: "7", content: "first" });
    const sid = first.body.session.id as string;
    const other = (await gw.post({ platform: "web", chat: "x", content: "elsewhere" })).body.session
      .id as string;
    const open = async (watch?: string) => {
      const sse = new SseReader();
      readers.push(sse);
      const path = watch ? `/api/events?watch=${encodeURIComponent(watch)}` : "/api/events";
      expect(await sse.open(dash.url(path), browser.cookie)).toBe(200);
      await until("the stream is ready", () => sse.events.some((e) => e.event === "ready"));
      return sse;
    };
    const sse = await open(`default/${sid}`);
    const elsewhere = await open(`default/${other}`);
    const list0 = await open();

    const posted = await gw.post({ platform: "telegram", chat: "7", content: "lisbon trip plans" });
    expect(posted.status).toBe(200);
    expect(posted.body.session.id).toBe(sid);

    await until("the live stream carries both messages", () =>
      sse.events.some(
        (e) =>
          e.event === "messages" &&
          e.data.messages.some((m: { content: string }) => m.content === "echo: lisbon trip plans"),
      ),
    );
    const live = sse.events
      .filter((e) => e.event === "messages")
      .flatMap((e) => e.data.messages as { id: number; sessionId: string; content: string }[]);
    // (The first exchange may come too, when no poll ran between it and the stream's start.)
    expect(live.map((m) => m.content).slice(-2)).toEqual([
      "lisbon trip plans",
      "echo: lisbon trip plans",
    ]);
    expect(live.every((m) => m.sessionId === sid)).toBe(true);
    expect(
      sse.events.some(
        (e) => e.event === "sessions" && e.data.sessions.some((s: { id: string }) => s.id === sid),
      ),
    ).toBe(true);
    // The other streams were told something changed, and were sent no message of this session.
    await until("every stream saw the change", () =>
      [elsewhere, list0].every((r) => r.events.some((e) => e.event === "change")),
    );
    const carried = (r: SseReader) =>
      r.events
        .filter((e) => e.event === "messages")
        .flatMap((e) => e.data.messages as { sessionId: string }[]);
    expect(carried(elsewhere).every((m) => m.sessionId === other)).toBe(true);
    expect(list0.events.filter((e) => e.event === "messages" || e.event === "sessions")).toEqual(
      [],
    );
    // An unknown profile is refused like on every other route.
    const refused = await browser.api("GET", "/api/events?watch=nobody%2Fx");
    expect(refused.status).toBe(404);

    const list = await browser.api("GET", "/api/sessions");
    expect(list.status).toBe(200);
    expect(
      list.body.items.map((s: { id: string; profile: string }) => [s.profile, s.id]).sort(),
    ).toEqual(
      [
        ["default", other],
        ["default", sid],
      ].sort(),
    );

    const transcript = await browser.api("GET", `/api/sessions/default/${sid}/messages`);
    expect(transcript.body.items.map((m: { content: string }) => m.content)).toEqual([
      "echo: lisbon trip plans",
      "lisbon trip plans",
      "echo: first",
      "first",
    ]); // newest first
    expect(transcript.body.items.slice(0, 2).map((m: { id: number }) => m.id)).toEqual([
      posted.body.reply.id,
      posted.body.message.id,
    ]);

    const search = await browser.api("GET", "/api/search?q=lisbon");
    expect(search.status).toBe(200);
    expect(search.body.items[0]).toMatchObject({ profile: "default", sessionId: sid });
    // Matches are marked with U+E000 … U+E001 (a "[" in the text stays text).
    expect(search.body.marks).toEqual(["\uE000", "\uE001"]);
    expect(search.body.items[0].snippet).toContain("\uE000lisbon\uE001");
    expect(search.body).toMatchObject({ offset: 0, nextOffset: null });

    const holders = runPs({ home, profile: "default" }).profiles[0]!.holders;
    const mine = holders.find((h) => h.pid === dash.pid);
    expect(mine?.kind).toBe("dashboard");
    // A pure reader between its row writes: it never holds the writer role.
    expect(mine?.roles).toEqual(["reader"]);
    expect(holders.find((h) => h.pid === gw.pid)?.kind).toBe("gateway");
  });

  it("renames, pins, archives and deletes through ordinary row writes the store then shows", async () => {
    const home = tempHome();
    const gw = await startGateway(home);
    const dash = await startDashboard(home);
    const browser = await dash.logIn();
    const a = (await gw.post({ platform: "web", chat: "a", content: "first" })).body.session.id;
    const b = (await gw.post({ platform: "web", chat: "b", content: "second" })).body.session.id;

    const renamed = await browser.api("PATCH", `/api/sessions/default/${a}`, {
      body: { title: "Trip to Lisbon", pinned: true },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.session).toMatchObject({ title: "Trip to Lisbon", pinned: true });
    await browser.api("PATCH", `/api/sessions/default/${b}`, { body: { archived: true } });
    await withStore(home, async (s) => {
      expect(await s.sessions.get(a)).toMatchObject({ title: "Trip to Lisbon", pinned: true });
      expect((await s.sessions.get(b))?.archived).toBe(true);
    });

    const visible = await browser.api("GET", "/api/sessions");
    expect(visible.body.items.map((s: { id: string }) => s.id)).toEqual([a]);
    const archived = await browser.api("GET", "/api/sessions?state=archived");
    expect(archived.body.items.map((s: { id: string }) => s.id)).toEqual([b]);
    const byTitle = await browser.api("GET", "/api/sessions?q=lisbon");
    expect(byTitle.body.items.map((s: { id: string }) => s.id)).toEqual([a]);

    const jsonl = await browser.api("GET", `/api/sessions/default/${a}/export?format=jsonl`);
    expect(jsonl.status).toBe(200);
    expect(jsonl.headers.get("content-disposition")).toContain("attachment");
    const lines = String(jsonl.body)
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.type)).toEqual(["session", "message", "message"]);
    const md = await browser.api("GET", `/api/sessions/default/${a}/export?format=markdown`);
    expect(String(md.body)).toContain("# Trip to Lisbon");

    const deleted = await browser.api("DELETE", `/api/sessions/default/${b}`);
    expect(deleted.body.deleted).toBe(true);
    await withStore(home, async (s) => expect(await s.sessions.get(b)).toBeNull());

    // Between writes the dashboard is a pure reader again.
    const mine = runPs({ home, profile: "default" }).profiles[0]!.holders.find(
      (h) => h.pid === dash.pid,
    );
    expect(mine?.roles).toEqual(["reader"]);
  });

  it("pages sessions with a keyset cursor and a transcript newest first", async () => {
    const home = tempHome();
    const gw = await startGateway(home);
    for (let i = 0; i < 5; i++) await gw.post({ platform: "web", chat: `c${i}`, content: `m${i}` });
    for (let i = 0; i < 3; i++) await gw.post({ platform: "web", chat: "c0", content: `more${i}` });
    const dash = await startDashboard(home);
    const browser = await dash.logIn();
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { items: { id: string }[]; nextCursor: string | null } } =
        await browser.api("GET", `/api/sessions?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...page.body.items.map((s) => s.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toHaveLength(5);
    expect(new Set(seen).size).toBe(5);

    const sid = seen[0]!; // chat c0 has the newest activity
    const first = await browser.api("GET", `/api/sessions/default/${sid}/messages?limit=3`);
    expect(first.body.items.map((m: { ordinal: number }) => m.ordinal)).toEqual([7, 6, 5]);
    const next = await browser.api(
      "GET",
      `/api/sessions/default/${sid}/messages?limit=3&before=${first.body.nextBefore}`,
    );
    expect(next.body.items.map((m: { ordinal: number }) => m.ordinal)).toEqual([4, 3, 2]);
  });

  it("health shows doctor findings, holders and sizes; back up now writes a verified backup", async () => {
    const home = tempHome();
    const gw = await startGateway(home);
    await gw.post({ platform: "web", chat: "x", content: "hello" });
    const dash = await startDashboard(home);
    const browser = await dash.logIn();
    const doctor = await browser.api("POST", "/api/doctor", { body: { profile: "default" } });
    expect(doctor.status).toBe(200);
    const findings = doctor.body.doctor.report.findings as { code: string; severity: string }[];
    expect(findings.find((f) => f.code === "backups")?.severity).toBe("info"); // no backup yet

    const backup = await browser.api("POST", "/api/backup", { body: { profile: "default" } });
    expect(backup.status).toBe(200);
    expect(backup.body.backup.name).toMatch(/^default-.*\.db$/);
    expect(readdirSync(join(home, "backups"))).toContain(backup.body.backup.name);

    const health = await browser.api("GET", "/api/health");
    const p = health.body.profiles[0];
    expect(p.files.database).toBeGreaterThan(0);
    expect(p.backups.map((b: { name: string }) => b.name)).toEqual([backup.body.backup.name]);
    expect(p.holders.map((h: { kind: string }) => h.kind).sort()).toEqual(["dashboard", "gateway"]);
    expect(JSON.stringify(p.backups)).not.toContain(home); // names, not paths

    const jobs = await browser.api("GET", "/api/jobs");
    expect(jobs.body).toMatchObject({ available: true, jobs: [], runs: [] });
  });

  it("lists scheduled jobs and their runs with honest outcomes, a refusal naming its holder", async () => {
    const home = tempHome();
    writeConfig(home, {
      scheduler: {
        jobs: [
          { name: "opt", schedule: "0 4 * * *", kind: "optimize", window: false },
          { name: "reap", schedule: "0 5 * * *", kind: "reap-idle" },
        ],
      },
    });
    expect((await runCli(["cron", "run-now", "reap"], { home })).code).toBe(0);
    const gw = await startGateway(home);
    expect((await runCli(["cron", "run-now", "opt"], { home })).code).toBe(3);
    const dash = await startDashboard(home);
    const browser = await dash.logIn();
    const jobs = await browser.api("GET", "/api/jobs");
    expect(jobs.status).toBe(200);
    expect(jobs.body.jobs.map((j: { name: string }) => j.name)).toEqual(["opt", "reap"]);
    const byJob = Object.fromEntries(
      jobs.body.runs.map((r: { job: string }) => [r.job, r]),
    ) as Record<string, { outcome: string; errorCode: string; holders: { pid: number }[] }>;
    expect(byJob.reap).toMatchObject({ outcome: "ok" });
    expect(byJob.opt).toMatchObject({ outcome: "refused", errorCode: "HEARTH_STORE_HELD" });
    expect(byJob.opt!.holders.map((h) => h.pid)).toContain(gw.pid);
    expect(JSON.stringify(jobs.body)).not.toContain(home); // no paths, no command lines
    const health = jobs.body.health.find((h: { job: string }) => h.job === "opt");
    expect(health).toMatchObject({ lastOutcome: "refused", lastSuccessAt: null });
    // Each job's next due time (issue 47).
    for (const j of jobs.body.jobs) expect(j.nextDueAt).toBeGreaterThan(Date.now());
    // Run now: recorded like the CLI's run-now (trigger manual), an honest outcome.
    const run = await browser.api("POST", "/api/jobs/run", {
      body: { job: "reap", profile: "default" },
    });
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ job: "reap", profile: "default", outcome: "ok" });
    const refused = await browser.api("POST", "/api/jobs/run", {
      body: { job: "opt", profile: "default" },
    });
    expect(refused.body).toMatchObject({ job: "opt", outcome: "refused" });
    const after = await browser.api("GET", "/api/jobs");
    expect(
      after.body.runs.filter((r: { job: string; trigger: string }) => r.trigger === "manual")
        .length,
    ).toBe(jobs.body.runs.filter((r: { trigger: string }) => r.trigger === "manual").length + 2);
    const missing = await browser.api("POST", "/api/jobs/run", {
      body: { job: "nope", profile: "default" },
    });
    expect(missing).toMatchObject({ status: 404, body: { error: { code: "HEARTH_NOT_FOUND" } } });
    // Without the CSRF token nothing runs.
    const forged = await browser.api("POST", "/api/jobs/run", {
      body: { job: "reap", profile: "default" },
      csrf: false,
    });
    expect(forged.status).toBe(403);
  });

  it("drains on SIGTERM with a live stream open and exits 0", async () => {
    const home = tempHome();
    const dash = await startDashboard(home);
    const browser = await dash.logIn();
    const sse = new SseReader();
    readers.push(sse);
    await sse.open(dash.url("/api/events"), browser.cookie);
    await until("the stream is ready", () => sse.events.length > 0);
    expect(existsSync(join(home, "dashboard.json"))).toBe(true);
    const result = await dash.kill("SIGTERM");
    expect(result.code).toBe(0);
    expect(dash.events.at(-1)).toMatchObject({ event: "dashboard.stopped", signal: "SIGTERM" });
    await sse.done;
    expect(existsSync(join(home, "dashboard.json"))).toBe(false);
  });

  it("a second dashboard on the same home gives dashboard.json back to the first when it stops", async () => {
    const home = tempHome();
    const first = await startDashboard(home);
    const second = await startDashboard(home);
    const recorded = () => JSON.parse(readFileSync(join(home, "dashboard.json"), "utf8"));
    expect(recorded()).toMatchObject({ pid: second.pid, address: second.address });
    expect((await second.kill("SIGTERM")).code).toBe(0);
    // The first still runs: `hearth dashboard link` must still find it.
    expect(recorded()).toMatchObject({ pid: first.pid, address: first.address });
    expect((await first.kill("SIGTERM")).code).toBe(0);
    expect(existsSync(join(home, "dashboard.json"))).toBe(false);
  });
});
