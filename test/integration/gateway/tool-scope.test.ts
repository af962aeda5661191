import { mkdirSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { sessionRead } from "../../../src/turn/tools/builtin/session-read.js";
import { sessionSearch } from "../../../src/turn/tools/builtin/session-search.js";
import type { ToolContext } from "../../../src/turn/tools/types.js";
import { closeFakes, startGateway, writeConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { toolFake, toolResults } from "../../helpers/tool-fake.js";

afterEach(closeFakes);

const PIN = "PIN 40417";

/** A home whose store holds Alice's chat (web/alice) with her PIN in it. */
async function homeWithAlice() {
  const home = tempHome();
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const store = await openStore({ home });
  const alice = await store.sessions.create({ source: "web", chatKey: "alice", title: "bank" });
  await store.messages.appendBatch(alice.id, [
    { role: "user", content: `my card ${PIN} please remember` },
    { role: "assistant", content: "noted" },
  ]);
  await store.close();
  return { home, alice };
}

/** Bob's chat asks the tools for Alice's PIN; what the model got back. */
async function bobAsks(tools: Record<string, unknown>) {
  const { home, alice } = await homeWithAlice();
  const fake = await toolFake([
    { id: "s", name: "session_search", arguments: { query: "card" } },
    { id: "r", name: "session_read", arguments: { sessionId: alice.id } },
  ]);
  writeConfig(home, {
    gateway: { responder: { kind: "openai", baseUrl: fake.baseUrl, model: "m" } },
    tools: { enabled: ["session_search", "session_read"], ...tools },
  });
  const gw = await startGateway(home);
  const res = await fetch(`${gw.address}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ platform: "web", chat: "bob", content: "what is alice's PIN?" }),
  });
  expect(res.status).toBe(200);
  const [search, read] = toolResults(fake.requests[1]!);
  return { search: search!.content, read: read!.content, sent: JSON.stringify(fake.requests) };
}

describe("the session tools see only the current chat (tools.sessionScope)", () => {
  it('by default ("chat"), another chat\'s PIN is neither found nor read, and never reaches the model', async () => {
    const { search, read, sent } = await bobAsks({});
    expect(JSON.parse(search)).toEqual([]);
    expect(read).toMatch(/^\[error\] no session with id "/);
    expect(sent).not.toContain("40417");
  });

  it('with sessionScope "profile" for the profile, the same calls find and read it', async () => {
    const { search, read } = await bobAsks({ profiles: { default: { sessionScope: "profile" } } });
    expect(JSON.parse(search)).toEqual([
      expect.objectContaining({ title: "bank", snippet: expect.stringContaining("[card]") }),
    ]);
    expect(JSON.parse(read).messages[0].content).toContain(PIN);
  });

  it("an owner's sessions are one scope across chats; a session without chat or owner sees only itself", async () => {
    const home = tempHome();
    mkdirSync(home, { recursive: true, mode: 0o700 });
    const store = await openStore({ home });
    try {
      const mk = async (over: { chatKey?: string; ownerId?: string }, text: string) => {
        const s = await store.sessions.create({ source: "web", ...over });
        await store.messages.append(s.id, { role: "user", content: text });
        return s;
      };
      const own1 = await mk({ chatKey: "c1", ownerId: "u1" }, "alpha one");
      const own2 = await mk({ chatKey: "c2", ownerId: "u1" }, "alpha two");
      const other = await mk({ chatKey: "c1", ownerId: "u2" }, "alpha three");
      const lone = await mk({}, "alpha four");
      const ctx = (sessionId: string): ToolContext => ({
        store,
        profile: "default",
        sessionId,
        signal: new AbortController().signal,
        settings: {},
      });
      const found = async (sessionId: string) =>
        ((await sessionSearch.run({ query: "alpha" }, ctx(sessionId))) as { sessionId: string }[])
          .map((h) => h.sessionId)
          .sort();
      expect(await found(own1.id)).toEqual([own1.id, own2.id].sort());
      expect(await found(other.id)).toEqual([other.id]);
      expect(await found(lone.id)).toEqual([lone.id]);
      await expect(sessionRead.run({ sessionId: other.id }, ctx(own1.id))).rejects.toMatchObject({
        code: "HEARTH_SESSION_NOT_FOUND",
      });
      await expect(sessionRead.run({ sessionId: own2.id }, ctx(own1.id))).resolves.toMatchObject({
        sessionId: own2.id,
      });
      const wide = { ...ctx(lone.id), sessionScope: "profile" as const };
      expect(await sessionSearch.run({ query: "alpha" }, wide)).toHaveLength(4);
    } finally {
      await store.close();
    }
  });
});
