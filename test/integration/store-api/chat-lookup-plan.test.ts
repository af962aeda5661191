/**
 * A chat's open session (its newest session not ended) is found in the
 * order of sessions_by_chat (source, chat_key, created_at), not by reading
 * and sorting every session the chat ever had: the gateway checks it at
 * every turn on a chat it remembers, inside the write transaction on
 * SQLite and under the session's row lock on PostgreSQL (schema 15 on
 * SQLite, 7 on PostgreSQL). Counted from the databases' own plans, on a
 * chat with 300 ended sessions and its open one.
 */
import { describe, expect, it } from "vitest";
import { openStore, type SqliteStore, type Store } from "../../../src/index.js";
import { OPEN_CHAT_ID } from "../../../src/store/pg/open-chat.js";
import { FIND_OPEN_CHAT } from "../../../src/store/sqlite/open-chat.js";
import { internals } from "../../../src/store/sqlite/store.js";
import { afterThisTest } from "../../helpers/cleanups.js";
import { tempHome } from "../../helpers/home.js";
import { freshPgDatabase, pgClientForTest, pgEnabled } from "../../helpers/pg.js";

const ENDED = 300;

/** A chat with ENDED ended sessions, then its open one; other chats around it. Returns the open one's id. */
async function longChat(store: Store): Promise<string> {
  for (let i = 0; i < ENDED; i++) {
    const s = await store.sessions.create({ source: "tg", chatKey: "long" });
    await store.sessions.end(s.id, "idle");
    await store.sessions.create({ source: "tg", chatKey: `other-${i}` });
  }
  const open = await store.sessions.create({ source: "tg", chatKey: "long" });
  expect((await store.sessions.resolveChat("tg", "long")).id).toBe(open.id);
  return open.id;
}

describe("a chat's open session, found in the index's order", () => {
  it("SQLite: by sessions_by_chat, with no sort of the chat's sessions", async () => {
    const store = (await openStore({ home: tempHome() })) as SqliteStore;
    afterThisTest(() => store.close());
    await longChat(store);
    const db = store[internals].connection("writer").db;
    const plan = db
      .prepare(`EXPLAIN QUERY PLAN ${FIND_OPEN_CHAT}`)
      .all("tg", "long")
      .map((r) => (r as { detail: string }).detail);
    expect(plan.join(" | ")).toContain("USING INDEX sessions_by_chat (source=? AND chat_key=?)");
    expect(plan.filter((d) => /TEMP B-TREE/.test(d))).toEqual([]);
  });

  it.skipIf(!pgEnabled)(
    "PostgreSQL: one row read for it, not the chat's every session",
    async () => {
      const url = await freshPgDatabase();
      const store = await openStore({ home: tempHome(), url });
      afterThisTest(() => store.close());
      const admin = await pgClientForTest(url);
      const open = await longChat(store);
      await admin.query("ANALYZE sessions");
      // The statement the item path runs (the lookup and the grouped check
      // ask the same of the index).
      const { rows } = await admin.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${OPEN_CHAT_ID}`, [
        "tg",
        "long",
      ]);
      const nodes: {
        "Node Type": string;
        "Actual Rows": number;
        "Rows Removed by Filter"?: number;
      }[] = [];
      const walk = (n: Record<string, unknown>) => {
        nodes.push(n as (typeof nodes)[number]);
        for (const c of (n.Plans as Record<string, unknown>[] | undefined) ?? []) walk(c);
      };
      walk(rows[0]["QUERY PLAN"][0].Plan);
      // No sort: the scan gives the newest first, and it is the open one.
      expect(nodes.map((n) => n["Node Type"])).not.toContain("Sort");
      const read = nodes
        .filter((n) => /Scan/.test(n["Node Type"]))
        .reduce((sum, n) => sum + n["Actual Rows"] + (n["Rows Removed by Filter"] ?? 0), 0);
      expect(read).toBe(1);
      expect(
        (await store.sessions.resolveChat("tg", "long")).id,
        "the lookup still answers the open one",
      ).toBe(open);
    },
  );
});
