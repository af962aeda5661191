import { sessionNotFound } from "../../../store/session-create.js";
import type { SearchOptions, Session } from "../../../store/types.js";
import type { ToolContext } from "../types.js";

/**
 * Which sessions the session tools may see (S2). With scope "chat" (the
 * default, and what an absent scope means): the sessions of the current
 * session's owner when it has one, else those of its chat (same platform
 * and chat key: every session the chat has had), else only the current
 * session. With "profile": every session of the profile.
 */
export type SessionFilter =
  | { kind: "profile" }
  | { kind: "owner"; ownerId: string }
  | { kind: "chat"; source: string; chatKey: string }
  | { kind: "session"; sessionId: string };

export async function sessionFilter(ctx: ToolContext): Promise<SessionFilter> {
  if (ctx.sessionScope === "profile") return { kind: "profile" };
  const current = await ctx.store.sessions.require(ctx.sessionId);
  if (current.ownerId !== null) return { kind: "owner", ownerId: current.ownerId };
  if (current.chatKey !== null)
    return { kind: "chat", source: current.source, chatKey: current.chatKey };
  return { kind: "session", sessionId: current.id };
}

/** The search options that keep a search inside the filter. */
export function searchFilter(filter: SessionFilter): SearchOptions {
  switch (filter.kind) {
    case "profile":
      return {};
    case "owner":
      return { ownerId: filter.ownerId };
    case "chat":
      return { source: filter.source, chatKey: filter.chatKey };
    case "session":
      return { sessionId: filter.sessionId };
  }
}

/** Whether `session` is inside the filter. */
export function inScope(session: Session, filter: SessionFilter): boolean {
  switch (filter.kind) {
    case "profile":
      return true;
    case "owner":
      return session.ownerId === filter.ownerId;
    case "chat":
      return session.source === filter.source && session.chatKey === filter.chatKey;
    case "session":
      return session.id === filter.sessionId;
  }
}

/**
 * The session `id`, when the filter lets the tool see it; otherwise the
 * same not-found error a missing session gets, word for word: a tool cannot
 * even learn that another chat's session exists.
 */
export async function requireInScope(ctx: ToolContext, id: string): Promise<Session> {
  const filter = await sessionFilter(ctx);
  const session = await ctx.store.sessions.get(id);
  if (session === null || !inScope(session, filter)) throw sessionNotFound(id);
  return session;
}
