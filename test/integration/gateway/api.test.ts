import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import {
  type GatewayChild,
  metric,
  readSse,
  startGateway,
  withStore,
  writeConfig,
} from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";

async function echoGateway(profiles?: string[]): Promise<{ home: string; gw: GatewayChild }> {
  const home = tempHome();
  writeConfig(home, { gateway: { bodyLimitBytes: 2048, turnWaitMs: 10_000 } });
  const gw = await startGateway(home, profiles ? { profiles } : {});
  return { home, gw };
}

const countMessages = (home: string, profile = "default") =>
  withStore(home, async (s) => (await s.counts()).messages, profile);

describe("gateway HTTP API", () => {
  it("a retried clientId whose turn already answered gets that reply, and no second turn runs", async () => {
    const { home, gw } = await echoGateway();
    const body = { platform: "web", chat: "retry", content: "plan it", clientId: "r-1" };
    const first = await gw.post(body);
    expect(first.status).toBe(200);
    // The client never saw that answer (a gateway killed after the commit): it retries.
    const again = await gw.post(body);
    expect(again.status).toBe(200);
    expect(again.body.message.id).toBe(first.body.message.id);
    expect(again.body.reply.id).toBe(first.body.reply.id);
    expect(await countMessages(home)).toBe(2);
    // The lease was given back: the session's next message runs its turn at once.
    const next = await gw.post({ ...body, content: "and then?", clientId: "r-2" });
    expect(next.status).toBe(200);
    expect(await countMessages(home)).toBe(4);
  });

  it("answers a message with the echo responder and stores both rows, one session per chat", async () => {
    const { gw } = await echoGateway();
    const first = await gw.post({ platform: "telegram", chat: "42", content: "hello there" });
    expect(first.status).toBe(200);
    expect(first.body.profile).toBe("default");
    expect(first.body.message).toMatchObject({ role: "user", content: "hello there", ordinal: 0 });
    expect(first.body.reply).toMatchObject({ role: "assistant", content: "echo: hello there" });
    expect(first.body.session).toMatchObject({ source: "telegram", chatKey: "42" });
    const sid = first.body.session.id as string;

    const shown = await gw.get(`/v1/sessions/${sid}`);
    expect(shown.status).toBe(200);
    expect(
      shown.body.messages.map((m: { role: string; content: string }) => [m.role, m.content]),
    ).toEqual([
      ["user", "hello there"],
      ["assistant", "echo: hello there"],
    ]);
    expect(shown.body.messages.map((m: { id: number }) => m.id)).toEqual([
      first.body.message.id,
      first.body.reply.id,
    ]);

    const second = await gw.post({ platform: "telegram", chat: "42", content: "again" });
    expect(second.status).toBe(200);
    expect(second.body.session.id).toBe(sid);
    expect(second.body.message.ordinal).toBe(2);
    expect(second.body.reply.content).toBe("echo: again");

    const other = await gw.post({ platform: "telegram", chat: "43", content: "x" });
    const otherPlatform = await gw.post({ platform: "slack", chat: "42", content: "y" });
    expect(other.body.session.id).not.toBe(sid);
    expect(otherPlatform.body.session.id).not.toBe(sid);
    expect(otherPlatform.body.session.id).not.toBe(other.body.session.id);

    const list = await gw.get("/v1/sessions");
    expect(list.status).toBe(200);
    expect(list.body.items).toHaveLength(3);
  });

  it("lists sessions a page at a time and shows history on request (query strings)", async () => {
    const { home, gw } = await echoGateway();
    for (const chat of ["a", "b", "c", "a"]) {
      expect((await gw.post({ platform: "web", chat, content: chat })).status).toBe(200);
    }
    const page = await gw.get("/v1/sessions?limit=2");
    expect({ status: page.status, code: page.body.error?.code }).toEqual({
      status: 200,
      code: undefined,
    });
    expect(page.body.items).toHaveLength(2);
    expect(page.body.nextCursor).toEqual(expect.any(String));
    const rest = await gw.get(
      `/v1/sessions?limit=2&cursor=${encodeURIComponent(page.body.nextCursor)}`,
    );
    expect(rest.body.items).toHaveLength(1);
    expect(rest.body.nextCursor).toBeNull();
    const sid = page.body.items.find((s: { chatKey: string }) => s.chatKey === "a").id as string;
    // Another writer rewinds the live transcript to its first turn and archives the session.
    const store = await openStore({ home });
    await store.messages.rewind(sid, 1);
    await store.sessions.setArchived(sid, true);
    await store.close();
    expect((await gw.get("/v1/sessions")).body.items).toHaveLength(2);
    const all = await gw.get("/v1/sessions?all=true");
    expect(all.status).toBe(200);
    expect(all.body.items).toHaveLength(3);
    expect((await gw.get(`/v1/sessions/${sid}`)).body.messages).toHaveLength(2);
    const history = await gw.get(`/v1/sessions/${sid}?history=true`);
    expect(history.status).toBe(200);
    expect(history.body.messages.map((m: { active: boolean }) => m.active)).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });

  it("puts 8 concurrent first messages of a new chat in ONE session, turn after turn", async () => {
    const { home, gw } = await echoGateway();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        gw.post({ platform: "web", chat: "burst", content: `m${i}`, clientId: `c${i}` }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    const ids = new Set(results.map((r) => r.body.session.id));
    expect(ids.size).toBe(1);
    const [sid] = [...ids] as [string];
    const { body } = await gw.get(`/v1/sessions/${sid}`);
    const messages = body.messages as { role: string; content: string; ordinal: number }[];
    expect(messages).toHaveLength(16);
    // Turns never interleave: each reply follows its own user message.
    for (let i = 0; i < 16; i += 2) {
      expect(messages[i]!.role).toBe("user");
      expect(messages[i + 1]).toMatchObject({
        role: "assistant",
        content: `echo: ${messages[i]!.content}`,
      });
    }
    expect(messages.map((m) => m.ordinal)).toEqual(messages.map((_, i) => i));
    await withStore(home, async (s) => {
      expect((await s.sessions.list({ source: "web", chatKey: "burst" })).items).toHaveLength(1);
    });
  });

  it("streams stored, deltas and reply as server-sent events, in order", async () => {
    const { gw } = await echoGateway();
    for (const how of [{ stream: true }, { accept: true }]) {
      const res = await fetch(gw.url("/v1/messages"), {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(how.accept ? { accept: "text/event-stream" } : {}),
        },
        body: JSON.stringify({
          platform: "web",
          chat: "sse",
          content: "one two three",
          ...(how.stream ? { stream: true } : {}),
        }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("text/event-stream");
      const events = await readSse(res);
      expect(events.map((e) => e.event)).toEqual([
        "stored",
        "delta",
        "delta",
        "delta",
        "delta",
        "reply",
      ]);
      expect(events[0]!.data.message).toMatchObject({ role: "user", content: "one two three" });
      const deltas = events.filter((e) => e.event === "delta").map((e) => e.data.text);
      expect(deltas).toEqual(["echo: ", "one ", "two ", "three"]);
      const reply = events.at(-1)!.data;
      expect(reply.reply.content).toBe(deltas.join(""));
      expect(reply.message.id).toBe(events[0]!.data.message.id);
      const shown = await gw.get(`/v1/sessions/${reply.session.id}`);
      expect(shown.body.messages.at(-1)).toMatchObject({
        id: reply.reply.id,
        content: "echo: one two three",
      });
    }
  });

  it("rejects bad input with a HEARTH_ code and the right status, never a 500, writing nothing", async () => {
    const { home, gw } = await echoGateway(["default", "work"]);
    const ok = await gw.post({ platform: "web", chat: "c", content: "seed" });
    expect(ok.status).toBe(200);
    const before = await countMessages(home);

    const valid = { platform: "web", chat: "c", content: "hi" };
    const json = (o: unknown) => JSON.stringify(o);
    const [BAD, NOT_FOUND, TOO_LARGE] = [
      "HEARTH_BAD_REQUEST",
      "HEARTH_NOT_FOUND",
      "HEARTH_BODY_TOO_LARGE",
    ];
    const nobody = "00000000-0000-4000-8000-000000000000";
    // [what, a POST /v1/messages body or "GET <path>", status, code, what the message names]
    const cases: [string, string, number, string, RegExp?][] = [
      ["missing content", json({ platform: "web", chat: "c" }), 400, BAD, /content/],
      ["missing platform", json({ chat: "c", content: "x" }), 400, BAD, /platform/],
      ["content of the wrong type", json({ ...valid, content: 42 }), 400, BAD, /content/],
      ["stream of the wrong type", json({ ...valid, stream: "yes" }), 400, BAD, /stream/],
      ["empty chat", json({ ...valid, chat: "" }), 400, BAD, /chat/],
      ["malformed JSON", '{"platform": "web", "chat": ', 400, BAD],
      ["a JSON array", "[]", 400, BAD],
      ["unknown extra field", json({ ...valid, sneaky: true }), 400, BAD, /sneaky|additional/],
      ["oversized body", json({ ...valid, content: "x".repeat(4096) }), 413, TOO_LARGE],
      ["unknown profile", json({ ...valid, profile: "nope" }), 404, NOT_FOUND, /nope/],
      ["unknown session", `GET /v1/sessions/${nobody}`, 404, "HEARTH_SESSION_NOT_FOUND"],
      ["unknown route", "GET /v2/whatever", 404, NOT_FOUND],
      ["wrong method", "GET /v1/messages", 404, NOT_FOUND],
      ["sessions of an unknown profile", "GET /v1/sessions?profile=nope", 404, NOT_FOUND, /nope/],
      ["a limit out of range", "GET /v1/sessions?limit=0", 400, BAD, /limit/],
      ["a limit that is no number", "GET /v1/sessions?limit=many", 400, BAD, /limit/],
    ];
    const outcomes = [];
    for (const [name, request] of cases) {
      const res = request.startsWith("GET ")
        ? await fetch(gw.url(request.slice(4)))
        : await fetch(gw.url("/v1/messages"), {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: request,
          });
      const body = (await res.json()) as { error?: { code?: string; message?: string } };
      outcomes.push({
        name,
        status: res.status,
        code: body.error?.code,
        message: body.error?.message,
      });
    }
    expect(outcomes).toEqual(
      cases.map(([name, , status, code, says]) => ({
        name,
        status,
        code,
        message: says ? expect.stringMatching(says) : expect.any(String),
      })),
    );
    expect(await countMessages(home)).toBe(before);
    expect(await countMessages(home, "work")).toBe(0);

    // The second served profile is a real one, in its own store.
    const work = await gw.post({ ...valid, profile: "work" });
    expect(work.status).toBe(200);
    expect(work.body.profile).toBe("work");
    expect(await countMessages(home, "work")).toBe(2);
    expect(await countMessages(home)).toBe(before);
  });

  it("counts acknowledged messages in /metrics and answers /v1/health", async () => {
    const { gw } = await echoGateway();
    for (let i = 0; i < 3; i++)
      expect((await gw.post({ platform: "p", chat: `c${i % 2}`, content: "x" })).status).toBe(200);
    expect((await gw.post({ platform: "p", chat: "c", content: 5 })).status).toBe(400);
    const res = await fetch(gw.url("/metrics"));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const text = await res.text();
    expect(metric(text, 'hearth_messages_acknowledged_total{profile="default",role="user"}')).toBe(
      3,
    );
    expect(
      metric(text, 'hearth_messages_acknowledged_total{profile="default",role="assistant"}'),
    ).toBe(3);
    expect(metric(text, 'hearth_turns_total{profile="default",outcome="ok"}')).toBe(3);
    expect(metric(text, 'hearth_http_errors_total{code="HEARTH_BAD_REQUEST"}')).toBe(1);

    const health = await gw.get("/v1/health");
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({
      status: "ok",
      pid: gw.pid,
      profiles: ["default"],
      responder: "echo",
    });
  });
});
