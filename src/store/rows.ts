import { parseMetadata } from "./metadata.js";
import type {
  HandoffState,
  Message,
  MessageContent,
  MessageRole,
  Session,
  TitleSource,
} from "./types.js";

export interface SessionRow {
  id: string;
  profile: string;
  source: string;
  chat_key: string | null;
  title: string | null;
  title_source: string | null;
  created_at: number;
  updated_at: number;
  last_activity_at: number;
  ended_at: number | null;
  end_reason: string | null;
  parent_id: string | null;
  pinned: number;
  archived: number;
  hidden: number;
  handoff_state: string | null;
  handoff_platform: string | null;
  handoff_owner: string | null;
  handoff_error: string | null;
  handoff_updated_at: number | null;
  message_count: number;
  token_count: number;
  owner_id: string | null;
  metadata: string | null;
}

export interface MessageRow {
  id: number;
  session_id: string;
  ordinal: number;
  role: string;
  content: string;
  content_type: string;
  name: string | null;
  tool_calls: string | null;
  tool_call_id: string | null;
  tokens_in: number | null;
  tokens_out: number | null;
  created_at: number;
  active: number;
  archived_reason: string | null;
  client_id: string | null;
  metadata: string | null;
}

export function toSession(row: SessionRow): Session {
  return {
    id: row.id,
    profile: row.profile,
    source: row.source,
    chatKey: row.chat_key,
    title: row.title,
    titleSource: row.title_source as TitleSource | null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastActivityAt: row.last_activity_at,
    endedAt: row.ended_at,
    endReason: row.end_reason,
    parentId: row.parent_id,
    pinned: row.pinned === 1,
    archived: row.archived === 1,
    hidden: row.hidden === 1,
    handoff: row.handoff_state
      ? {
          state: row.handoff_state as HandoffState,
          platform: row.handoff_platform,
          owner: row.handoff_owner,
          error: row.handoff_error,
          updatedAt: row.handoff_updated_at,
        }
      : null,
    messageCount: row.message_count,
    tokenCount: row.token_count,
    ownerId: row.owner_id ?? null,
    metadata: parseMetadata(row.metadata ?? null),
  };
}

export function toMessage(row: MessageRow): Message {
  return {
    id: row.id,
    sessionId: row.session_id,
    ordinal: row.ordinal,
    role: row.role as MessageRole,
    content:
      row.content_type === "json"
        ? (JSON.parse(row.content) as MessageContent | null)
        : row.content,
    name: row.name,
    toolCalls: row.tool_calls === null ? null : (JSON.parse(row.tool_calls) as unknown[]),
    toolCallId: row.tool_call_id,
    tokensIn: row.tokens_in,
    tokensOut: row.tokens_out,
    createdAt: row.created_at,
    active: row.active === 1,
    archivedReason: row.archived_reason as Message["archivedReason"],
    clientId: row.client_id,
    metadata: parseMetadata(row.metadata ?? null),
  };
}

/**
 * A message's columns in the order messageFromRaw reads them, session_id
 * left out (the caller asked for one session): transcripts are read as
 * arrays (better-sqlite3's raw mode), one object built per message instead
 * of a row object and then a message.
 */
export const MESSAGE_COLUMNS =
  "id, ordinal, role, content, content_type, name, tool_calls, tool_call_id, tokens_in, tokens_out, created_at, active, archived_reason, client_id, metadata";

export function messageFromRaw(sessionId: string, r: unknown[]): Message {
  const content = r[3] as string;
  const toolCalls = r[6] as string | null;
  return {
    id: r[0] as number,
    sessionId,
    ordinal: r[1] as number,
    role: r[2] as MessageRole,
    content: r[4] === "json" ? (JSON.parse(content) as MessageContent) : content,
    name: r[5] as string | null,
    toolCalls: toolCalls === null ? null : (JSON.parse(toolCalls) as unknown[]),
    toolCallId: r[7] as string | null,
    tokensIn: r[8] as number | null,
    tokensOut: r[9] as number | null,
    createdAt: r[10] as number,
    active: r[11] === 1,
    archivedReason: r[12] as Message["archivedReason"],
    clientId: r[13] as string | null,
    metadata: parseMetadata((r[14] as string | null) ?? null),
  };
}
