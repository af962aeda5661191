import type { Message } from "../../../store/types.js";
import type { Tool } from "../types.js";
import { requireInScope } from "./session-scope.js";

/** A page of one session's live transcript, read through the store's windowed load. */
export const sessionRead: Tool = {
  name: "session_read",
  description:
    "Read a page of a past conversation by session id: messages in order from an ordinal. Use the ids session_search returns.",
  parameters: {
    type: "object",
    properties: {
      sessionId: { type: "string" },
      fromOrdinal: {
        type: "integer",
        minimum: 0,
        description: "first message to read (default 0)",
      },
      limit: { type: "integer", minimum: 1, maximum: 100, description: "messages per page" },
    },
    required: ["sessionId"],
    additionalProperties: false,
  },
  idempotent: true,
  async run(args, ctx) {
    if (typeof args.sessionId !== "string") throw new TypeError("sessionId must be a string");
    const pageSize = Number(ctx.settings.pageSize ?? 20);
    const limit = Number.isInteger(args.limit) ? Math.min(Number(args.limit), pageSize) : pageSize;
    const from = Number.isInteger(args.fromOrdinal) ? Number(args.fromOrdinal) : 0;
    const session = await requireInScope(ctx, args.sessionId);
    const page = await ctx.store.messages.load(session.id, {
      afterOrdinal: from - 1,
      limit: limit + 1,
    });
    const more = page.length > limit;
    return {
      sessionId: session.id,
      title: session.title,
      messages: page.slice(0, limit).map(brief),
      nextOrdinal: more ? page[limit]!.ordinal : null,
    };
  },
};

function brief(m: Message) {
  return {
    ordinal: m.ordinal,
    role: m.role,
    content: typeof m.content === "string" ? m.content : JSON.stringify(m.content),
  };
}
