/**
 * The statements every gateway turn runs on PostgreSQL (the chat lookup and
 * the group commit's three), and those of every new chat (its session's
 * creation and its automatic title), are prepared: each connection parses
 * and plans them once, under a name the server keeps (pg_prepared_statements). And a
 * migration that adds a column to `sessions` while a gateway runs leaves
 * those plans answering: their results name their columns, so the plan's
 * shape does not change ("cached plan must not change result type").
 */
import { afterEach, expect, it } from "vitest";
import { prepare } from "../../../src/store/message-input.js";
import { appendGroup } from "../../../src/store/pg/group-append.js";
import { migratePg } from "../../../src/store/pg/migrate.js";
import { createPool, type PgClient, type PgPool, pgDb } from "../../../src/store/pg/pool.js";
import { PgSessions } from "../../../src/store/pg/sessions.js";
import { freshPgDatabase, pgEnabled, withPgClient } from "../../helpers/pg.js";

const pools: PgPool[] = [];
afterEach(async () => {
  for (const p of pools.splice(0)) await p.end();
});

/** Sessions on a pool of ONE connection: every statement below runs on it. */
async function oneConnection() {
  const url = await freshPgDatabase();
  const pool = createPool(url, { max: 1 });
  pools.push(pool);
  await migratePg(pool, url);
  return { url, pool, sessions: new PgSessions(pgDb(pool, url, "default")) };
}

/** One group commit of `n` messages (with clientIds: the batch reads them under its locks). */
async function groupCommit(pool: PgPool, sessionId: string, n: number, tag: string) {
  const client: PgClient = await pool.connect();
  try {
    await client.query("BEGIN");
    const now = Date.now();
    const stored = await appendGroup(
      client,
      Array.from({ length: n }, (_, i) => ({
        sessionId,
        message: prepare({ role: "user", content: `${tag} ${i}`, clientId: `${tag}-${i}` }, now),
      })),
      now,
    );
    await client.query("COMMIT");
    return stored;
  } finally {
    client.release();
  }
}

async function preparedNames(pool: PgPool): Promise<string[]> {
  const { rows } = await pool.query<{ name: string }>(
    "SELECT name FROM pg_prepared_statements ORDER BY name",
  );
  return rows.map((r) => r.name);
}

it.runIf(pgEnabled)(
  "a turn's statements are prepared once per connection, under names the server keeps",
  async () => {
    const { pool, sessions } = await oneConnection();
    const created = await sessions.resolveChat("test", "chat-1");
    for (let round = 0; round < 5; round++) {
      expect((await sessions.resolveChat("test", "chat-1")).id).toBe(created.id);
      expect(await groupCommit(pool, created.id, 3, `r${round}`)).toHaveLength(3);
      // A new chat, and its automatic title (with the metadata it records), then a user's.
      const chat = await sessions.resolveChat("test", `new-${round}`);
      await sessions.rename(chat.id, `auto ${round}`, "auto", { titledBy: "test" });
      await sessions.rename(chat.id, `user ${round}`, "user");
    }
    expect(await preparedNames(pool)).toEqual([
      "hearth_chat_create",
      "hearth_chat_lock",
      "hearth_find_chat",
      "hearth_group_insert",
      "hearth_group_lock",
      "hearth_group_read",
      "hearth_rename",
      "hearth_rename_merging",
      "hearth_rename_read",
    ]);
    const session = await sessions.require(created.id);
    expect(session.messageCount).toBe(15);
    const renamed = await sessions.resolveChat("test", "new-4");
    expect(renamed).toMatchObject({ title: "user 4", titleSource: "user" });
    expect(renamed.metadata).toEqual({ titledBy: "test" });
  },
);

it.runIf(pgEnabled)(
  "a column added to sessions while the statements are prepared: they still answer, with the session's fields",
  async () => {
    const { url, pool, sessions } = await oneConnection();
    const created = await sessions.resolveChat("test", "chat-2");
    await groupCommit(pool, created.id, 2, "before");
    await sessions.rename(created.id, "before", "auto", { titledBy: "test" });
    await sessions.rename(created.id, "before, mine", "user");
    expect(await preparedNames(pool)).toEqual(
      expect.arrayContaining([
        "hearth_chat_create",
        "hearth_group_insert",
        "hearth_rename",
        "hearth_rename_merging",
      ]),
    );
    // What a newer hearth's migration could do while this one runs.
    await withPgClient(url, (c) => c.query("ALTER TABLE sessions ADD COLUMN later_field text"));
    const found = await sessions.resolveChat("test", "chat-2");
    expect(found.id).toBe(created.id);
    // A new chat and its titles, on plans prepared before the column came.
    const chat = await sessions.resolveChat("test", "chat-3");
    expect(chat.messageCount).toBe(0);
    expect(await sessions.rename(chat.id, "auto", "auto", { titledBy: "test" })).toMatchObject({
      id: chat.id,
      title: "auto",
      metadata: { titledBy: "test" },
    });
    expect(await sessions.rename(chat.id, "mine", "user")).toMatchObject({ title: "mine" });
    const after = await groupCommit(pool, created.id, 2, "after");
    expect(after.map((s) => s.message.ordinal)).toEqual([2, 3]);
    expect(after[1]!.session?.messageCount).toBe(4);
    expect(after[1]!.session?.id).toBe(created.id);
  },
);
