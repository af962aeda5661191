/**
 * What a gateway turn costs on PostgreSQL, counted in round trips (every
 * pg Client#query is one: node-postgres waits for each reply), never timed.
 * A turn sends one statement of its own, the chat lookup; its user message
 * and its reply ride group commits shared with other turns, and the
 * session it returns comes from the reply's commit. It used to read the
 * session again after the reply: half a round trip per message (workload 18).
 * A group commit is 5 round trips whatever its size (BEGIN, the locks, what
 * they guard, the INSERT with the meta writes, COMMIT; it was 8), a new
 * chat's session one transaction of 4 (was 6) and its automatic title 2
 * single statements: a read of the metadata, then one UPDATE of the title
 * with `titledBy` merged in (was 13: two transactions of lock, read, write,
 * read; then two writes, the second a copy of the metadata read before).
 */
import pg from "pg";
import { afterEach, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../../src/config/schema.js";
import { openStore, type Store } from "../../../src/index.js";
import { GroupCommitter } from "../../../src/turn/group-commit.js";
import { createResponder } from "../../../src/turn/responder.js";
import { runTurn } from "../../../src/turn/run.js";
import { tempHome } from "../../helpers/home.js";
import { freshPgDatabase, pgEnabled } from "../../helpers/pg.js";
import { until } from "../../helpers/process.js";

const CHATS = 24;
const stores: Store[] = [];
const query = pg.Client.prototype.query;
afterEach(async () => {
  pg.Client.prototype.query = query;
  for (const s of stores.splice(0)) await s.close();
});

/** A PostgreSQL store at `url`, with what runTurn needs of a profile and of the gateway. */
async function turnRig(url: string) {
  const store = await openStore({ home: tempHome(), url, env: {} });
  stores.push(store);
  const runtime = { profile: "default", store, committer: new GroupCommitter(store, true) };
  const deps = {
    responder: createResponder(DEFAULT_CONFIG),
    config: DEFAULT_CONFIG,
    signal: new AbortController().signal,
  };
  return { store, runtime, deps };
}

it.runIf(pgEnabled)(
  "a turn sends one round trip of its own (the chat lookup); the session it returns comes from the reply's commit",
  async () => {
    const { store, runtime, deps } = await turnRig(await freshPgDatabase());
    const turns = () =>
      Promise.all(
        Array.from({ length: CHATS }, (_, i) =>
          runTurn(runtime, { platform: "test", chat: `c${i}`, content: `hello ${i}` }, deps),
        ),
      );
    await turns(); // the chats' sessions exist from here on
    // Their automatic titles (the first exchange's, written after the reply, not awaited, with
    // `titledBy` in the same write) land before the count starts: not the second turns' trips.
    await until("the first exchanges' titles", async () => {
      const { items } = await store.sessions.list({ limit: 100 });
      return (
        items.length === CHATS &&
        items.every((s) => s.title !== null && (s.metadata as { titledBy?: string })?.titledBy)
      );
    });
    const sent: string[] = [];
    pg.Client.prototype.query = function counted(this: pg.Client, ...args: unknown[]) {
      const q = args[0];
      sent.push(typeof q === "string" ? q : ((q as { text?: string })?.text ?? ""));
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;

    const results = await turns();
    pg.Client.prototype.query = query;

    const text = (q: string) => q.replace(/\s+/g, " ").trim();
    const lookups = sent.filter((q) => isChatLookup(text(q)));
    const rereads = sent.filter((q) => /^SELECT .* FROM sessions WHERE id\b/.test(text(q)));
    const commits = sent.filter((q) => text(q) === "BEGIN").length;
    expect(lookups).toHaveLength(CHATS);
    expect(rereads).toHaveLength(0);
    // Everything else belongs to group commits (at most 5 round trips each, BEGIN and COMMIT
    // included), two per turn at most: the user message's and the reply's.
    expect(sent.length - lookups.length).toBeLessThanOrEqual(5 * commits);
    expect(commits).toBeLessThanOrEqual(2 * CHATS);

    for (const r of results) {
      expect(r.reply.content).toBe(`echo: ${r.message.content}`);
      // What the commit returned is what the database holds.
      expect(r.session).toEqual(await store.sessions.get(r.session.id));
      expect(r.session.messageCount).toBe(4);
    }
  },
);

/** The chat lookup, whichever columns it names (prepared, it names them all). */
function isChatLookup(text: string): boolean {
  return /^SELECT .* FROM sessions WHERE source = \$1 AND chat_key = \$2\b/.test(text);
}

/** The round trips `sent` as transactions (BEGIN … COMMIT on one connection) and lone statements. */
function transactions(sent: readonly { client: unknown; text: string }[]) {
  const open = new Map<unknown, string[]>();
  const done: string[][] = [];
  const lone: string[] = [];
  for (const { client, text } of sent) {
    const t = text.replace(/\s+/g, " ").trim();
    const current = open.get(client);
    if (t === "BEGIN") open.set(client, [t]);
    else if (!current) lone.push(t);
    else {
      current.push(t);
      if (t === "COMMIT" || t === "ROLLBACK") {
        done.push(current);
        open.delete(client);
      }
    }
  }
  return { done, lone, open: open.size };
}

it.runIf(pgEnabled)(
  "a new chat: its lookup, a resolve of 4 round trips, group commits of 5, an automatic title of 2",
  async () => {
    const url = await freshPgDatabase();
    const { store, runtime, deps } = await turnRig(url);
    // Polled on a client of its own, through the driver's own query: not counted.
    const poll = new pg.Client({ connectionString: url });
    await poll.connect();
    const sent: { client: unknown; text: string }[] = [];
    pg.Client.prototype.query = function counted(this: pg.Client, ...args: unknown[]) {
      const q = args[0];
      const text = typeof q === "string" ? q : ((q as { text?: string })?.text ?? "");
      sent.push({ client: this, text });
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
    try {
      await Promise.all(
        Array.from({ length: CHATS }, (_, i) =>
          runTurn(runtime, { platform: "test", chat: `n${i}`, content: `first ${i}` }, deps),
        ),
      );
      // The titles are written after the replies, not awaited by the turns.
      await until("every new chat titled", async () => {
        const { rows } = await (query as (t: string) => Promise<pg.QueryResult>).call(
          poll,
          "SELECT count(*)::int AS n FROM sessions WHERE metadata LIKE '%titledBy%'",
        );
        return rows[0]?.n === CHATS;
      });
    } finally {
      pg.Client.prototype.query = query;
      await poll.end();
    }
    // The store's lease owner takes its presence once (its own connection, owner-presence.ts).
    const { done, lone, open } = transactions(
      sent.filter((q) => !q.text.startsWith("SELECT pg_advisory_lock_shared")),
    );
    expect(open).toBe(0);
    const resolves = done.filter((t) => t.some((q) => q.startsWith("INSERT INTO sessions")));
    const commits = done.filter((t) => t.some((q) => q.includes("meta_locks")));
    expect(resolves).toHaveLength(CHATS);
    for (const t of resolves) expect(t.length).toBe(4); // BEGIN, the chat's lock, INSERT … RETURNING, COMMIT
    expect(commits.length).toBeLessThanOrEqual(2 * CHATS);
    for (const t of commits) expect(t.length).toBeLessThanOrEqual(5);
    expect(resolves.length + commits.length).toBe(done.length); // no other transaction
    // Outside transactions: each chat's lookup (it finds nothing), and its title's read of the
    // metadata and one write of the title with `titledBy` merged in.
    const lookups = lone.filter(isChatLookup);
    const reads = lone.filter((q) => q.startsWith("SELECT title_source, metadata FROM sessions"));
    const titles = lone.filter(
      (q) => q.startsWith("UPDATE sessions SET title") && q.includes("metadata = $6"),
    );
    expect([lookups.length, reads.length, titles.length]).toEqual([CHATS, CHATS, CHATS]);
    expect(lone).toHaveLength(3 * CHATS);
    const sessions = (await store.sessions.list({ limit: 100 })).items;
    expect(sessions.every((s) => s.title?.startsWith("first ") && s.titleSource === "auto")).toBe(
      true,
    );
  },
);
