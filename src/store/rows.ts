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
