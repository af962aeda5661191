import { HearthError } from "../errors.js";

/**
 * AppendItem.openChat's refusal, on either backend: `sessionId` was ended,
 * deleted or replaced by a newer session for the chat, by this process or
 * another, since the caller resolved it. Nothing of the item was written.
 */
export function chatMoved(sessionId: string): HearthError {
  return new HearthError(
    "HEARTH_CHAT_MOVED",
    `session ${sessionId} is no longer the open session of this chat`,
    { resource: sessionId },
  );
}
