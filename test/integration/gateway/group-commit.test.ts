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
const SECONDS = 3;
/** The two runs alternate in slices, so a change in the machine's other load hits both alike. */
const SLICES = 3;

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
  turns: number;
  seconds: number;
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
    turns: 0,
    seconds: 0,
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

/**
 * CLIENTS async loops of POSTs, each its own chat, back to back for `ms`.
 * Throughput counts the turns answered within the window; the requests
 * still in flight at its end are awaited (and checked in the store) but not counted.
 */
async function slice(t: Target, ms: number): Promise<void> {
  const end = Date.now() + ms;
  const counts = await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      let ok = 0;
      while (Date.now() < end) if ((await send(t, c)) && Date.now() <= end) ok++;
      return ok;
    }),
  );
  t.turns += counts.reduce((a, b) => a + b, 0);
  t.seconds += ms / 1000;
}

const messagesPerSecond = (t: Target) => (2 * t.turns) / t.seconds;
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

describe("group commit at synchronous=FULL", () => {
  it("acknowledges many messages per commit, and more messages per second than one transaction per message", async () => {
    const grouped = await target(true);
    const single = await target(false);
    for (let i = 0; i < SLICES; i++) {
      await slice(grouped, (SECONDS * 1000) / SLICES);
      await slice(single, (SECONDS * 1000) / SLICES);
    }
    const [gm, sm] = [await metricsOf(grouped), await metricsOf(single)];
    const ratio = messagesPerSecond(grouped) / messagesPerSecond(single);
    const g = batches(gm);
    console.log(
      `group commit: ${messagesPerSecond(grouped).toFixed(0)} acknowledged messages/s ` +
        `(${grouped.turns} turns in ${grouped.seconds.toFixed(2)} s, ${g.count} commits, mean batch ${g.mean.toFixed(1)}); ` +
        `one transaction per message: ${messagesPerSecond(single).toFixed(0)} messages/s ` +
        `(${single.turns} turns in ${single.seconds.toFixed(2)} s); ratio ${ratio.toFixed(2)} ` +
        `(${CLIENTS} clients, synchronous=full)`,
    );

    expect([...grouped.failures, ...single.failures]).toEqual([]);
    await expectAllStored(grouped);
    await expectAllStored(single);
    // The counter agrees with what the clients saw (warm-up included).
    const users = 'hearth_messages_acknowledged_total{profile="default",role="user"}';
    expect(metric(gm, users)).toBe(grouped.acks.length);
    expect(metric(sm, users)).toBe(single.acks.length);
    // Under load, commits carry many messages; without group commit there are no batches.
    expect(g.larger).toBeGreaterThan(0);
    // Several messages per commit: several times fewer commits (and fsyncs) per message.
    expect(g.mean).toBeGreaterThanOrEqual(4);
    expect(batches(sm).count).toBe(0);
    // Throughput. On this 2-vCPU VM an fsync costs ~0.4 ms while a turn costs
    // ~3 ms of CPU (gateway and clients share the two cores), so saving
    // fsyncs is bounded at about 2x here (measured 1.7-2.1x). The ratio grows
    // with the cost of an fsync: docs/benchmarks.md records the figure. The
    // margin asserted here is what this machine reaches every time.
    expect(ratio).toBeGreaterThanOrEqual(1.3);
  });
});
