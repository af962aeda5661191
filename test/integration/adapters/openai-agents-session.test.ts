import type { AgentInputItem } from "@openai/agents";
import { describe, expect, it } from "vitest";
import { HearthSession } from "../../../src/adapters/openai-agents/index.js";
import { openStore } from "../../../src/index.js";
import { tempHome } from "../../helpers/home.js";

const user = (text: string) => ({ type: "message", role: "user", content: text }) as AgentInputItem;

describe("HearthSession (the Session interface on a real store)", () => {
  it("returns items exactly as given, the last `limit` of them oldest first", async () => {
    const session = await HearthSession.open({ home: tempHome() }, { sessionId: "s" });
    const odd = {
      type: "function_call_result",
      callId: "c-1",
      name: "look",
      status: "completed",
      output: { type: "text", text: 'é ✓ \u0000 "quoted"' },
      providerData: { nested: [1, 2.5, null, { deep: true }], big: 2 ** 53 - 1 },
    } as unknown as AgentInputItem;
    const items = [user("one"), odd, user("three")];
    await session.addItems(items);
    expect(await session.getItems()).toEqual(items);
    expect(await session.getItems(2)).toEqual(items.slice(1));
    expect(await session.getItems(10)).toEqual(items);
    expect(await session.getItems(0)).toEqual([]);
    expect(await session.getItems(-1)).toEqual([]);
    expect(await session.getItems(200_000)).toEqual(items);
    await expect(session.getItems(Number.NaN)).rejects.toThrow(TypeError);
    await session.close();
  });

  it("pops the last item, and clears by archiving: history stays in the store", async () => {
    const home = tempHome();
    const session = await HearthSession.open({ home }, { sessionId: "s" });
    expect(await session.popItem()).toBeUndefined();
    await session.addItems([user("a"), user("b"), user("c")]);
    expect(await session.popItem()).toEqual(user("c"));
    expect(await session.getItems()).toEqual([user("a"), user("b")]);
    await session.addItems([user("d")]);
    expect(await session.popItem()).toEqual(user("d"));
    expect(await session.popItem()).toEqual(user("b"));
    expect(await session.popItem()).toEqual(user("a"));
    expect(await session.popItem()).toBeUndefined();
    await session.addItems([user("e")]);
    await session.clearSession();
    expect(await session.getItems()).toEqual([]);
    const history = await session.store.messages.load("s", { includeHistory: true });
    expect(history.map((m) => (m.content as { content: string }).content)).toEqual([
      "a",
      "b",
      "c",
      "d",
      "e",
    ]);
    expect(history.every((m) => !m.active)).toBe(true);
    await session.close();
  });

  it("creates its session on first use (once, even when asked twice at once) and shares it by id", async () => {
    const store = await openStore({ home: tempHome() });
    const a = new HearthSession(store, { sessionId: "shared", title: "From the SDK" });
    const b = new HearthSession(store, { sessionId: "shared" });
    expect(await Promise.all([a.getSessionId(), b.getSessionId()])).toEqual(["shared", "shared"]);
    await a.addItems([user("from a")]);
    expect(await b.getItems()).toEqual([user("from a")]);
    const stored = await store.sessions.require("shared");
    expect(stored.source).toBe("openai-agents");
    expect(stored.title).toBe("From the SDK");
    const fresh = new HearthSession(store);
    const id = await fresh.getSessionId();
    expect(id).not.toBe("shared");
    expect(await store.sessions.get(id)).not.toBeNull();
    await store.close();
  });

  it("reads a transcript hearth wrote without the SDK as message items", async () => {
    const store = await openStore({ home: tempHome() });
    const s = await store.sessions.create({ id: "plain" });
    await store.messages.appendBatch(s.id, [
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
      { role: "tool", content: "42", toolCallId: "c-9", name: "answer" },
    ]);
    const items = await new HearthSession(store, { sessionId: "plain" }).getItems();
    expect(items).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", status: "completed", content: [{ type: "output_text", text: "hello" }] },
      {
        type: "function_call_result",
        callId: "c-9",
        name: "answer",
        status: "completed",
        output: "42",
      },
    ]);
    await store.close();
  });

  it("reads a window mixing SDK items and text messages, and names an unknown session", async () => {
    const store = await openStore({ home: tempHome() });
    const session = new HearthSession(store, { sessionId: "mixed" });
    await session.addItems([user("one")]);
    await store.messages.append("mixed", { role: "user", content: "typed in hearth chat" });
    await session.addItems([user("three")]);
    const plain = { role: "user", content: "typed in hearth chat" };
    expect(await session.getItems()).toEqual([user("one"), plain, user("three")]);
    expect(await session.getItems(1)).toEqual([user("three")]);
    expect(await session.getItems(2)).toEqual([plain, user("three")]);
    await expect(store.jsonTail.read("no-such-session", 5)).rejects.toMatchObject({
      code: "HEARTH_SESSION_NOT_FOUND",
    });
    await expect(store.jsonTail.read("mixed", 0)).rejects.toThrow(RangeError);
    await store.close();
  });

  it("refuses bad input before changing anything", async () => {
    const store = await openStore({ home: tempHome() });
    expect(() => new HearthSession(store, { sessionId: "" })).toThrow(TypeError);
    const session = new HearthSession(store, { sessionId: "s" });
    await expect(session.addItems([user("ok"), null as unknown as AgentInputItem])).rejects.toThrow(
      TypeError,
    );
    expect(await session.getItems()).toEqual([]);
    await store.close();
  });
});
