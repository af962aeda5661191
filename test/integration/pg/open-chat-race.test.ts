/**
 * AppendItem.openChat on PostgreSQL against another connection (another
 * host, for the server): an end of the session that another transaction
 * holds uncommitted while the append waits for the session's row. When it
 * commits, the append must see it (its check reads after the row lock, in
 * a statement of its own) and refuse with HEARTH_CHAT_MOVED: nothing may be
 * appended to the ended session. Both the grouped attempt and the item
 * path (the batch run again item by item) are raced.
 */
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { openStore, type Store } from "../../../src/index.js";
import { afterThisTest } from "../../helpers/cleanups.js";
import { tempHome } from "../../helpers/home.js";
import { freshPgDatabase, pgClientForTest, pgEnabled } from "../../helpers/pg.js";
import { until } from "../../helpers/process.js";

const chatItem = (sessionId: string, content: string) => ({
  sessionId,
  message: { role: "user" as const, content },
  metaBefore: { key: `lease-${content}`, decide: () => "held" },
  openChat: { platform: "tg", chatKey: "race" },
});

async function setup(): Promise<{ store: Store; other: pg.Client; url: string }> {
  const url = await freshPgDatabase();
  const store = await openStore({ home: tempHome(), url });
  afterThisTest(() => store.close());
  return { store, other: await pgClientForTest(url), url };
}

/** Until a backend of this database waits for a lock (the append, at the session's row). */
async function appendWaits(other: pg.Client): Promise<void> {
  await until("the append waits for the session's row", async () => {
    const { rows } = await other.query(
      `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
       WHERE NOT l.granted AND a.datname = current_database()`,
    );
    return rows[0].n > 0;
  });
}

describe.skipIf(!pgEnabled)("openChat on PostgreSQL, raced by another connection", () => {
  for (const path of ["grouped attempt", "item path"] as const) {
    it(`${path}: an end committed while the append waits for the row moves the chat; nothing is appended`, async () => {
      const { store, other } = await setup();
      const chat = await store.sessions.resolveChat("tg", "race");
      const bystander = await store.sessions.create({ title: "bystander" });
      await other.query("BEGIN");
      await other.query(
        "UPDATE sessions SET ended_at = $1, end_reason = 'raced', updated_at = $1 WHERE id = $2",
        [Date.now(), chat.id],
      );
      // The item path: one clientId twice in a batch sends it there before any lock is taken.
      const twice = {
        sessionId: bystander.id,
        message: { role: "user" as const, content: "b", clientId: "dup" },
      };
      const items =
        path === "item path"
          ? [twice, twice, chatItem(chat.id, "raced")]
          : [chatItem(chat.id, "raced")];
      const pending = store.messages.appendMany(items);
      await appendWaits(other);
      await other.query("COMMIT");
      const results = await pending;
      expect(results.at(-1)).toMatchObject({ ok: false, error: { code: "HEARTH_CHAT_MOVED" } });
      if (path === "item path") expect(results.slice(0, 2).map((r) => r.ok)).toEqual([true, true]);
      expect(await store.messages.load(chat.id)).toEqual([]);
      expect(await store.meta.get("lease-raced")).toBeNull();
      expect((await store.sessions.require(chat.id)).endedAt).not.toBeNull();
    });
  }
});
