/**
 * What a gateway turn on a chat it remembers costs PostgreSQL, counted in
 * the queries the store sends (node-postgres's Client#query, each one round
 * trip), never timed (issue 44, workload 18). A gateway remembers each
 * chat's open session (ChatSessions) on PostgreSQL as on SQLite: a turn on
 * a remembered chat sends no chat lookup, its check rides in the group
 * commit's read under its locks (AppendItem.openChat).
 */
import pg from "pg";
import { expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../../src/config/schema.js";
import { openStore } from "../../../src/index.js";
import { ChatSessions } from "../../../src/turn/chat-sessions.js";
import { GroupCommitter } from "../../../src/turn/group-commit.js";
import { createResponder } from "../../../src/turn/responder.js";
import { runTurn } from "../../../src/turn/run.js";
import { afterThisTest } from "../../helpers/cleanups.js";
import { tempHome } from "../../helpers/home.js";
import { freshPgDatabase, pgEnabled } from "../../helpers/pg.js";
import { until } from "../../helpers/process.js";

const CHATS = 16;

/** Every query this process sends to PostgreSQL from now on, by its prepared name or text. */
function countQueries(): string[] {
  const sent: string[] = [];
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function counted(this: pg.Client, ...args: unknown[]) {
    const first = args[0] as string | { name?: string; text?: string };
    sent.push(typeof first === "string" ? first : (first.name ?? first.text ?? ""));
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  afterThisTest(() => {
    pg.Client.prototype.query = query;
  });
  return sent;
}

it.skipIf(!pgEnabled)(
  "a gateway's turn on a chat it remembers sends no chat lookup; without the memory, one per turn",
  async () => {
    const store = await openStore({ home: tempHome(), url: await freshPgDatabase() });
    afterThisTest(() => store.close());
    const deps = {
      responder: createResponder(DEFAULT_CONFIG),
      config: DEFAULT_CONFIG,
      signal: new AbortController().signal,
    };
    const chats = new ChatSessions();
    const committer = new GroupCommitter(store, true);
    const turns = (remember: boolean) =>
      Promise.all(
        Array.from({ length: CHATS }, (_, i) =>
          runTurn(
            { profile: "default", store, committer, ...(remember ? { chats } : {}) },
            { platform: "test", chat: `c${i}`, content: `hello ${i}` },
            deps,
          ),
        ),
      );
    const first = await turns(true);
    expect(chats.size).toBe(CHATS);
    // The first exchanges' automatic titles (after the reply, not awaited) land before the count.
    await until("the first exchanges' titles", async () => {
      const { items } = await store.sessions.list({ limit: 100 });
      return items.length === CHATS && items.every((s) => s.title !== null);
    });
    const sent = countQueries();
    const lookups = () => sent.filter((q) => q === "hearth_find_chat").length;

    const remembered = await turns(true);
    expect(lookups()).toBe(0);
    // Nothing but group commits: BEGIN, their three prepared statements, COMMIT.
    expect(sent.filter((q) => !/^(BEGIN|COMMIT|hearth_group_\w+)$/.test(q))).toEqual([]);
    remembered.forEach((r, i) => {
      expect(r.session.id).toBe(first[i]!.session.id);
      expect(r.session.messageCount).toBe(4);
    });

    // The same turns without the memory: a lookup each.
    const looked = await turns(false);
    expect(lookups()).toBe(CHATS);
    for (const r of looked) expect(r.session.messageCount).toBe(6);
  },
);
