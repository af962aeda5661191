import type { AgentInputItem, Session } from "@openai/agents";
import type { Store } from "../../store/api.js";
import { type OpenStoreOptions, openStore } from "../../store/open.js";
import { itemToMessage, messageToItem } from "./items.js";
import { popLast } from "./pop.js";

/** The most messages.load() returns in one call. */
const MAX_WINDOW = 100_000;

export interface HearthSessionOptions {
  /** The hearth session to use; created (with this id) on first use when missing. Defaults to a new one. */
  sessionId?: string;
  /** The `source` of a session this adapter creates. Default "openai-agents". */
  source?: string;
  /** The title of a session this adapter creates. */
  title?: string;
}

/**
 * An OpenAI Agents SDK `Session` on a hearth store: the conversation is a
 * hearth session, each item one message whose JSON content is the item as
 * given. Any number of processes may use one session: appends are atomic
 * and ordered by the store, and an addItems() that resolved survives a
 * kill -9.
 *
 * ```ts
 * const session = await HearthSession.open({ home: "./.hearth" }, { sessionId: "chat-1" });
 * await run(agent, "Hello", { session });
 * ```
 */
export class HearthSession implements Session {
  readonly store: Store;
  private readonly options: HearthSessionOptions;
  private id: string | undefined;
  private owned = false;

  /** A session on an open store; closing the store stays the caller's job. */
  constructor(store: Store, options: HearthSessionOptions = {}) {
    if (
      options.sessionId !== undefined &&
      (typeof options.sessionId !== "string" || options.sessionId === "")
    ) {
      throw new TypeError("options.sessionId must be a non-empty string");
    }
    this.store = store;
    this.options = options;
  }

  /** Open a store (as openStore() does) and a session on it; close() closes both. */
  static async open(
    storeOptions: OpenStoreOptions = {},
    options: HearthSessionOptions = {},
  ): Promise<HearthSession> {
    const session = new HearthSession(await openStore(storeOptions), options);
    session.owned = true;
    return session;
  }

  /** Close the store when this session opened it (HearthSession.open); otherwise nothing. */
  async close(): Promise<void> {
    if (this.owned) await this.store.close();
  }

  /** The hearth session id; the session is created on first call when it does not exist yet. */
  async getSessionId(): Promise<string> {
    if (this.id !== undefined) return this.id;
    const wanted = this.options.sessionId;
    if (wanted !== undefined && (await this.store.sessions.get(wanted))) {
      this.id = wanted;
      return wanted;
    }
    const input = {
      ...(wanted === undefined ? {} : { id: wanted }),
      source: this.options.source ?? "openai-agents",
      ...(this.options.title === undefined
        ? {}
        : { title: this.options.title, titleSource: "auto" as const }),
    };
    try {
      this.id = (await this.store.sessions.create(input)).id;
    } catch (err) {
      // Another process (or call) created it in between: use that one.
      if (wanted === undefined || !(await this.store.sessions.get(wanted))) throw err;
      this.id = wanted;
    }
    return this.id;
  }

  /** The items in order; with `limit`, the last `limit` of them (still oldest first). */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    if (limit !== undefined && (typeof limit !== "number" || Number.isNaN(limit))) {
      throw new TypeError(`limit must be a number, got ${typeof limit}`);
    }
    const id = await this.getSessionId();
    if (limit !== undefined && limit <= 0) return [];
    const window = limit === undefined || limit > MAX_WINDOW ? undefined : Math.floor(limit);
    // Items this adapter stored are JSON: one read, one parse.
    const fast = await this.store.jsonTail.read(id, window);
    if (fast)
      return (
        limit === undefined || window !== undefined ? fast : fast.slice(-limit)
      ) as AgentInputItem[];
    // A window with text messages (written without the SDK): message by message.
    const messages =
      window === undefined
        ? await this.store.messages.load(id)
        : (await this.store.messages.load(id, { limit: window, order: "newest-first" })).reverse();
    return (limit === undefined || window !== undefined ? messages : messages.slice(-limit)).map(
      messageToItem,
    );
  }

  /** Append items in one transaction: all of them or none. */
  async addItems(items: AgentInputItem[]): Promise<void> {
    if (!Array.isArray(items)) throw new TypeError("items must be an array");
    if (items.length === 0) return;
    const messages = items.map(itemToMessage);
    await this.store.messages.appendBatch(await this.getSessionId(), messages);
  }

  /** Archive the last item (kept as history) and return it. */
  async popItem(): Promise<AgentInputItem | undefined> {
    const popped = await popLast(this.store, await this.getSessionId());
    return popped && messageToItem(popped);
  }

  /** Archive every item: the session starts empty, its history stays in the store. */
  async clearSession(): Promise<void> {
    await this.store.messages.rewind(await this.getSessionId(), -1);
  }
}
