import type { Store } from "../../store/api.js";
import type { Message } from "../../store/types.js";

/**
 * Archive the last live message of a session and return it (undefined when
 * there is none), in one transaction: a message another process appends
 * meanwhile is never archived in its place. Archived messages stay as
 * history (D2).
 */
export async function popLast(store: Store, sessionId: string): Promise<Message | undefined> {
  return (await store.messages.pop(sessionId)) ?? undefined;
}
