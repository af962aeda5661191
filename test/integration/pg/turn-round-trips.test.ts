/**
 * What a gateway turn costs on PostgreSQL, counted in round trips (every
 * pg Client#query is one: node-postgres waits for each reply), never timed.
 * A turn sends one statement of its own, the chat lookup; its user message
 * and its reply ride group commits shared with other turns, and the
 * session it returns comes from the reply's commit. It used to read the
 * session again after the reply: half a round trip per message (workload 18).
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

it.runIf(pgEnabled)(
  "a turn sends one round trip of its own (the chat lookup); the session it returns comes from the reply's commit",
  async () => {
    const store = await openStore({ home: tempHome(), url: await freshPgDatabase(), env: {} });
    stores.push(store);
    const runtime = { profile: "default", store, committer: new GroupCommitter(store, true) };
    const deps = {
      responder: createResponder(DEFAULT_CONFIG),
      config: DEFAULT_CONFIG,
      signal: new AbortController().signal,
    };
    const turns = () =>
      Promise.all(
        Array.from({ length: CHATS }, (_, i) =>
          runTurn(runtime, { platform: "test", chat: `c${i}`, content: `hello ${i}` }, deps),
        ),
      );
    await turns(); // the chats' sessions exist from here on
    // Their automatic titles (the first exchange's, written after the reply, not awaited, with
    // `titledBy` in a second write) land before the count starts: not the second turns' trips.
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
    const lookups = sent.filter((q) => text(q).startsWith("SELECT * FROM sessions WHERE source"));
    const rereads = sent.filter((q) => text(q).startsWith("SELECT * FROM sessions WHERE id"));
    const commits = sent.filter((q) => text(q) === "BEGIN").length;
    expect(lookups).toHaveLength(CHATS);
    expect(rereads).toHaveLength(0);
    // Everything else belongs to group commits (at most 8 round trips each, BEGIN and COMMIT
    // included), two per turn at most: the user message's and the reply's.
    expect(sent.length - lookups.length).toBeLessThanOrEqual(8 * commits);
    expect(commits).toBeLessThanOrEqual(2 * CHATS);

    for (const r of results) {
      expect(r.reply.content).toBe(`echo: ${r.message.content}`);
      // What the commit returned is what the database holds.
      expect(r.session).toEqual(await store.sessions.get(r.session.id));
      expect(r.session.messageCount).toBe(4);
    }
  },
);
