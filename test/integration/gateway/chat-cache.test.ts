/**
 * The gateway remembers each chat's open session between turns (issue 44:
 * the chat lookup was ~9 % of a turn's CPU), and never trusts what it
 * remembers: another process may end, delete or replace the chat's
 * session at any moment. Here that process is this test's, on the same
 * store as the real gateway child; each case fails if the gateway appends
 * to the session it remembers without the check in the append's
 * transaction (AppendItem.openChat). On SQLite and on PostgreSQL (where
 * this test's process is another host for the database).
 */
import { describe, expect, it } from "vitest";
import { openStore, type Store } from "../../../src/index.js";
import { type GatewayChild, startGateway, writeConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { freshPgDatabase, pgEnabled } from "../../helpers/pg.js";

const PLATFORM = "telegram";

async function turn(gw: GatewayChild, chat: string, content: string) {
  const res = await gw.post({ platform: PLATFORM, chat, content });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.reply.content).toBe(`echo: ${content}`);
  return res.body as { session: { id: string; messageCount: number } };
}

/** Two turns on `chat` (the second from the gateway's memory), then `meddle` in this process, then a third turn. */
async function afterMeddling(
  backend: Backend,
  chat: string,
  meddle: (store: Store, remembered: string) => Promise<void>,
) {
  const home = tempHome();
  const url = backend === "postgres" ? await freshPgDatabase() : undefined;
  if (url) writeConfig(home, { store: { url } });
  const gw = await startGateway(home);
  const first = await turn(gw, chat, "one");
  const second = await turn(gw, chat, "two");
  expect(second.session.id).toBe(first.session.id);
  const remembered = first.session.id;
  const store = await openStore({ home, profile: "default", ...(url ? { url } : {}) });
  try {
    await meddle(store, remembered);
    const third = await turn(gw, chat, "three");
    const after = await store.sessions.get(remembered);
    return { remembered, third, after };
  } finally {
    await store.close();
  }
}

type Backend = "sqlite" | "postgres";
const BACKENDS: Backend[] = pgEnabled ? ["sqlite", "postgres"] : ["sqlite"];

describe.each(
  BACKENDS,
)("the gateway's chat → session memory, across processes, on %s", (backend) => {
  it("a session another process ended gets no more turns: the chat's next turn opens a new one", async () => {
    const { remembered, third, after } = await afterMeddling(
      backend,
      "ended",
      async (store, id) => {
        await store.sessions.end(id, "ended by another process");
      },
    );
    expect(third.session.id).not.toBe(remembered);
    expect(third.session.messageCount).toBe(2);
    // The ended session kept its two exchanges, nothing more.
    expect(after?.messageCount).toBe(4);
    expect(after?.endedAt).not.toBeNull();
  });

  it("a newer open session another process made for the chat gets the turn", async () => {
    let replacement = "";
    const { remembered, third, after } = await afterMeddling(
      backend,
      "replaced",
      async (store, id) => {
        const old = await store.sessions.require(id);
        // Newer than the remembered one (the chat's open session is the newest not ended).
        while (Date.now() <= old.createdAt) await new Promise((r) => setTimeout(r, 2));
        replacement = (await store.sessions.create({ source: PLATFORM, chatKey: "replaced" })).id;
        expect((await store.sessions.resolveChat(PLATFORM, "replaced")).id).toBe(replacement);
      },
    );
    expect(third.session.id).toBe(replacement);
    expect(third.session.id).not.toBe(remembered);
    expect(after?.messageCount).toBe(4);
  });

  it("a session another process deleted: the next turn is answered in a new session, not refused", async () => {
    const { remembered, third, after } = await afterMeddling(
      backend,
      "deleted",
      async (store, id) => {
        expect(await store.sessions.delete(id)).toBe(true);
      },
    );
    expect(after).toBeNull();
    expect(third.session.id).not.toBe(remembered);
    expect(third.session.messageCount).toBe(2);
  });
});
