import {
  type ExportCursor,
  type ExportOptions,
  type ExportStep,
  exportStep,
} from "../../export.js";
import type { LoadOptions } from "../../message-input.js";
import type { Messages } from "../../messages.js";
import type { SearchSql } from "../../search.js";
import type { JsonParts } from "../../transcript-json.js";
import type { Message } from "../../types.js";
import type { Access } from "../access.js";
import { SqliteExport } from "../export.js";
import { searchHits } from "../search.js";
import type { ReaderPool } from "./pool.js";

/** A load of more rows than this (or of a whole transcript) runs in a reader thread. */
export const LARGE_LOAD = 1000;

/** The store's large reads (searches, export steps), on reader threads when it has them, else on the caller's thread. */
export interface Offload extends SearchSql {
  exportStep(options: ExportOptions, cursor: ExportCursor | undefined): Promise<ExportStep>;
}

export function offload(access: Access, pool: ReaderPool | undefined): Offload {
  if (!pool) {
    const rows = new SqliteExport(access);
    return {
      hits: async (query) => searchHits(access, query),
      exportStep: (options, cursor) => exportStep(rows, options, cursor),
    };
  }
  return {
    hits: (query) => pool.run("search", [query]),
    exportStep: (options, cursor) => pool.run("export.step", [options, cursor]),
  };
}

const small = (options: LoadOptions): boolean =>
  options.limit !== undefined && options.limit <= LARGE_LOAD;

/**
 * Send `messages.load`, `loadJson` and `loadJsonParts` of large windows to the reader
 * threads; small ones stay (a thread round trip costs more than 1,000 rows).
 */
export function offloadLargeLoads(messages: Messages, pool: ReaderPool | undefined): Messages {
  if (!pool) return messages;
  const load = messages.load.bind(messages);
  const loadJson = messages.loadJson.bind(messages);
  const loadJsonParts = messages.loadJsonParts.bind(messages);
  messages.load = (sessionId: string, options: LoadOptions = {}): Promise<Message[]> =>
    small(options) ? load(sessionId, options) : pool.run("messages.load", [sessionId, options]);
  messages.loadJson = (sessionId: string, options: LoadOptions = {}): Promise<Uint8Array> =>
    small(options)
      ? loadJson(sessionId, options)
      : pool.run("messages.loadJson", [sessionId, options]);
  messages.loadJsonParts = (sessionId: string, options: LoadOptions = {}): Promise<JsonParts> =>
    small(options)
      ? loadJsonParts(sessionId, options)
      : pool.stream("messages.loadJsonParts", [sessionId, options]);
  return messages;
}
