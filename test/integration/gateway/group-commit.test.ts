import { describe, expect, it } from "vitest";
import {
  type ApiResponse,
  type GatewayChild,
  metric,
  startGateway,
  withStore,
  writeConfig,
} from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";

const CLIENTS = 64;
/** Turns per client after the first: a fixed amount of work, not a time window. */
const TURNS = 10;

interface Ack {
  session: string;
  ids: number[];
}

interface Target {
  home: string;
  gw: GatewayChild;
  /** Messages sent so far by each client (its next clientId). */
  sent: number[];
  acks: Ack[];
  failures: string[];
}

/** A fresh home and gateway; every client's first message creates its session (not timed). */
async function target(groupCommit: boolean): Promise<Target> {
  const home = tempHome();
  // No compaction during the run: every turn is the same work in both modes.
  writeConfig(home, {
    durability: { synchronous: "full" },
    gateway: { groupCommit, compactAfterMessages: 100_000 },
  });
  const gw = await startGateway(home);
  const t: Target = {
    home,
    gw,
    sent: Array(CLIENTS).fill(0),
    acks: [],
    failures: [],
  };
  await Promise.all(Array.from({ length: CLIENTS }, (_, c) => send(t, c)));
  return t;
}

async function send(t: Target, client: number): Promise<boolean> {
  const n = t.sent[client]!++;
  const res: ApiResponse = await t.gw.post({
    platform: "bench",
    chat: `client-${client}`,
    content: `client ${client} message ${n}`,
    clientId: `${client}-${n}`,
  });
  if (res.status !== 200) {
    t.failures.push(`${res.status} ${res.body.error?.code}`);
    return false;
  }
  t.acks.push({ session: res.body.session.id, ids: [res.body.message.id, res.body.reply.id] });
  return true;
}

/** CLIENTS async loops of POSTs, each its own chat, TURNS back to back. */
async function load(t: Target): Promise<void> {
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      for (let i = 0; i < TURNS; i++) await send(t, c);
    }),
  );
}

const metricsOf = async (t: Target) => (await fetch(t.gw.url("/metrics"))).text();

/** Every acknowledged message (user and reply) is in the store, read back by another process. */
async function expectAllStored(run: Target): Promise<void> {
  const bySession = new Map<string, number[]>();
  for (const a of run.acks)
    bySession.set(a.session, [...(bySession.get(a.session) ?? []), ...a.ids]);
  expect(bySession.size).toBe(CLIENTS);
  await withStore(run.home, async (store) => {
    for (const [session, ids] of bySession) {
      const stored = new Set(
        (await store.messages.load(session, { includeHistory: true })).map((m) => m.id),
      );
      expect(ids.filter((id) => !stored.has(id))).toEqual([]);
    }
  });
}

const batches = (text: string) => {
  const count = metric(text, 'hearth_commit_batch_size_count{profile="default"}') ?? 0;
  const single = metric(text, 'hearth_commit_batch_size_bucket{le="1",profile="default"}') ?? 0;
  const sum = metric(text, 'hearth_commit_batch_size_sum{profile="default"}') ?? 0;
  return { count, larger: count - single, mean: count ? sum / count : 0 };
};

/** hearth_write_commits_total, summed over where the fsync ran, and the labels seen. */
const writeCommits = (text: string) => {
  const lines = text
    .split("\n")
    .filter((l) => l.startsWith('hearth_write_commits_total{profile="default",'));
  const fsync = lines.map((l) => /fsync="([^"]+)"/.exec(l)?.[1]);
  const total = lines.reduce((t, l) => t + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
  return { total, fsync };
};

describe("group commit at synchronous=FULL", () => {
  it("acknowledges many messages per commit; without it, one transaction per message", async () => {
    const grouped = await target(true);
    const single = await target(false);
    await load(grouped);
    await load(single);
    const [gm, sm] = [await metricsOf(grouped), await metricsOf(single)];
    const g = batches(gm);
    console.log(
      `group commit: ${grouped.acks.length} turns in ${g.count} commits, mean batch ${g.mean.toFixed(1)} ` +
        `(${CLIENTS} clients, synchronous=full); group commit off: ${single.acks.length} turns, no batches`,
    );

    expect([...grouped.failures, ...single.failures]).toEqual([]);
    await expectAllStored(grouped);
    await expectAllStored(single);
    // The counter agrees with what the clients saw (the first turns included).
    const users = 'hearth_messages_acknowledged_total{profile="default",role="user"}';
    expect(metric(gm, users)).toBe(grouped.acks.length);
    expect(metric(sm, users)).toBe(single.acks.length);
    // Under load, commits carry several messages: at least half the commits
    // (and fsyncs) are saved; without grouping each commit carries 1. How many more depends on what an fsync costs (measured here:
    // a mean of 13-16 on ext4, 5 on tmpfs), and how much faster that makes
    // the gateway is the benchmark's figure (docs/benchmarks.md, workload 3),
    // not this test's. Without group commit there are no batches.
    expect(g.larger).toBeGreaterThan(0);
    expect(g.mean).toBeGreaterThanOrEqual(2);
    expect(batches(sm).count).toBe(0);
    // The store's own count of write-path commits, read from it at the
    // scrape: every group commit is one; without grouping each message
    // (user and reply) is one of its own.
    const [gc, sc] = [writeCommits(gm), writeCommits(sm)];
    expect(gc.total).toBeGreaterThanOrEqual(g.count);
    expect(gc.total).toBeLessThan(2 * grouped.acks.length);
    expect(sc.total).toBeGreaterThanOrEqual(2 * single.acks.length);
    for (const where of [...gc.fsync, ...sc.fsync])
      expect([
        "loop",
        "busy-loop",
        "slow-disk",
        "backup",
        "fsync-running",
        "group-commit",
      ]).toContain(where);
    // The WAL fsyncs those commits made, counted by the store: one per
    // commit on the loop, one per shared fsync on the pool, so never more
    // than the commits; with group commit, fewer than the messages.
    const fsyncs = (text: string) =>
      metric(text, 'hearth_wal_fsyncs_total{profile="default"}') ?? 0;
    const [gf, sf] = [fsyncs(gm), fsyncs(sm)];
    console.log(
      `WAL fsyncs per acknowledged message: ${(gf / (2 * grouped.acks.length)).toFixed(3)} with group commit, ${(sf / (2 * single.acks.length)).toFixed(3)} without`,
    );
    expect(gf).toBeGreaterThan(0);
    expect(gf).toBeLessThanOrEqual(gc.total);
    expect(gf).toBeLessThan(grouped.acks.length);
    expect(sf).toBeGreaterThan(0);
    expect(sf).toBeLessThanOrEqual(sc.total);
  });
});
