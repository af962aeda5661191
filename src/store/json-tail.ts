import { requireString } from "./args.js";
import { MAX_LOAD } from "./message-input.js";

/** What a backend does for JsonTail: one read of the window's content column. */
export interface JsonTailSql {
  /**
   * The JSON contents of the last `limit` live messages (every live one when
   * undefined), oldest first, joined into one JSON array text ("[]" for a
   * session with none); undefined when one of them is text. An unknown
   * session is HEARTH_SESSION_NOT_FOUND.
   */
  read(sessionId: string, limit: number | undefined): Promise<string | undefined>;
}

/**
 * The JSON contents of a session's last live messages in one read: only
 * the content column, joined into one JSON array text and parsed once.
 * This is the hot read of an SDK session adapter (hearth/openai-agents
 * getItems), several times faster than loading whole messages (every
 * column a JS value) and parsing them one by one.
 */
export class JsonTail {
  constructor(private readonly sql: JsonTailSql) {}

  /**
   * The parsed contents of the last `limit` live messages (every live one
   * when `limit` is undefined), oldest first. Undefined when a message of
   * that window has text content (use messages.load for those).
   */
  async read(sessionId: string, limit?: number): Promise<unknown[] | undefined> {
    requireString(sessionId, "sessionId");
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > MAX_LOAD)) {
      throw new RangeError(`limit must be an integer from 1 to ${MAX_LOAD}, got ${limit}`);
    }
    const json = await this.sql.read(sessionId, limit);
    // One parse of the whole window rather than one per message.
    return json === undefined ? undefined : (JSON.parse(json) as unknown[]);
  }
}
