import type { Store } from "../../store/store.js";
import type { Message } from "../../store/types.js";

/**
 * Archive the last live message of a session and return it (undefined when
 * there is none). Archived messages stay as history (D2).
 *
 * Load-then-archive: a message another process appends between the two
 * steps is archived too.
 */
// TODO(library): use messages.pop with expectLastOrdinal
export async function popLast(store: Store, sessionId: string): Promise<Message | undefined> {
  const [last, before] = await store.messages.load(sessionId, { limit: 2, order: "newest-first" });
  if (!last) return undefined;
  await store.messages.rewind(sessionId, before ? before.ordinal : -1);
  return last;
}
