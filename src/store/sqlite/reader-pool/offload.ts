import {
  type ExportCursor,
  type ExportOptions,
  type ExportStep,
  exportStep,
} from "../../export.js";
import type { LoadWindow } from "../../message-input.js";
import type { SearchSql } from "../../search.js";
import type { JsonParts } from "../../transcript-json.js";
import type { Message } from "../../types.js";
import type { Access } from "../access.js";
import { SqliteExport } from "../export.js";
import { SqliteMessages } from "../messages.js";
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

const small = (window: LoadWindow): boolean =>
  window.limit !== undefined && window.limit <= LARGE_LOAD;

/**
 * SQLite's message statements with the large window reads (`load`,
 * `loadJson`, `loadJsonParts` of more than LARGE_LOAD rows or a whole
 * transcript) on the reader threads; small ones stay (a thread round trip
 * costs more than 1,000 rows). The neutral Messages has checked the
 * arguments already: the threads get the validated window.
 */
export class OffloadedMessages extends SqliteMessages {
  constructor(
    access: Access,
    private readonly pool: ReaderPool,
  ) {
    super(access);
  }

  override load(sessionId: string, window: LoadWindow): Promise<Message[]> {
    return small(window)
      ? super.load(sessionId, window)
      : this.pool.run("messages.load", [sessionId, window]);
  }

  override loadJson(sessionId: string, window: LoadWindow): Promise<Uint8Array> {
    return small(window)
      ? super.loadJson(sessionId, window)
      : this.pool.run("messages.loadJson", [sessionId, window]);
  }

  override loadJsonParts(sessionId: string, window: LoadWindow): Promise<JsonParts> {
    return small(window)
      ? super.loadJsonParts(sessionId, window)
      : this.pool.stream("messages.loadJsonParts", [sessionId, window]);
  }
}
