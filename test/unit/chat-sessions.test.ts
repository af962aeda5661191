import { expect, it } from "vitest";
import type { Session } from "../../src/store/types.js";
import { ChatSessions } from "../../src/turn/chat-sessions.js";

const session = (id: string) => ({ id }) as Session;

it("remembers a chat's session per platform and chat, and forgets it when told", () => {
  const chats = new ChatSessions();
  chats.set("telegram", "a", session("s1"));
  chats.set("slack", "a", session("s2"));
  expect(chats.get("telegram", "a")?.id).toBe("s1");
  expect(chats.get("slack", "a")?.id).toBe("s2");
  // Two chats whose platform and chat concatenate alike are two chats.
  expect(chats.get("telegra", "ma")).toBeUndefined();
  chats.set("a\u0000b", "c", session("s3"));
  expect(chats.get("a", "b\u0000c")).toBeUndefined();
  chats.forget("telegram", "a");
  expect(chats.get("telegram", "a")).toBeUndefined();
  expect(chats.size).toBe(2);
});

it("keeps at most `max` chats, forgetting the least recently used", () => {
  const chats = new ChatSessions(2);
  chats.set("p", "a", session("a"));
  chats.set("p", "b", session("b"));
  expect(chats.get("p", "a")?.id).toBe("a"); // a is now the most recently used
  chats.set("p", "c", session("c"));
  expect(chats.size).toBe(2);
  expect(chats.get("p", "b")).toBeUndefined();
  expect(chats.get("p", "a")?.id).toBe("a");
  expect(chats.get("p", "c")?.id).toBe("c");
});

it("keeps three fields of a session, not the session (issue 44: its metadata may be 16 KiB)", () => {
  const chats = new ChatSessions();
  const whole = {
    id: "s1",
    title: null,
    messageCount: 4,
    profile: "default",
    metadata: { notes: "x".repeat(16_000) },
    handoff: null,
  } as unknown as Session;
  chats.set("telegram", "a", whole);
  const kept = chats.get("telegram", "a");
  expect(kept).not.toBe(whole);
  expect(Object.keys(kept ?? {}).sort()).toEqual(["id", "messageCount", "title"]);
  expect(kept).toEqual({ id: "s1", title: null, messageCount: 4 });
});
