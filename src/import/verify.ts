/**
 * The verification pass: per source session, the count and a SHA-256 of
 * every message as hearth would store it, against the same over the
 * messages hearth holds under the source's clientIds (messages added in
 * hearth since are not the source's and are left out).
 */
import { createHash } from "node:crypto";
import type { Store } from "../store/api.js";
import type { ImportMessageRow } from "../store/imports.js";
import { messageValues } from "../store/message-write.js";
import type { Message } from "../store/types.js";
import type { ImportSource } from "./source.js";

export interface SessionDifference {
  sourceId: string;
  sessionId: string;
  source: { messages: number; sha256: string };
  hearth: { messages: number; sha256: string };
}

export interface VerifyReport {
  ok: boolean;
  sessions: number;
  messages: number;
  /** The sessions that differ (the first 100). */
  differences: SessionDifference[];
  differing: number;
}

/** Messages one load() asks for while paging a transcript. */
const PAGE = 10_000;

export async function verifyImport(store: Store, source: ImportSource): Promise<VerifyReport> {
  const report: VerifyReport = {
    ok: true,
    sessions: 0,
    messages: 0,
    differences: [],
    differing: 0,
  };
  source.noHome.counting = false;
  try {
    for (const s of source.sessions()) {
      const want = new Digest();
      for (const m of s.messages()) want.add(fromRow(store.imports.prepare(m)));
      const have = new Digest();
      if (await store.sessions.get(s.session.id)) {
        let after = -1;
        for (;;) {
          const page = await store.messages.load(s.session.id, {
            includeHistory: true,
            afterOrdinal: after,
            limit: PAGE,
          });
          for (const m of page)
            if (m.clientId?.startsWith(source.clientIdPrefix)) have.add(fromMessage(m));
          if (page.length < PAGE) break;
          after = page[page.length - 1]!.ordinal;
        }
      }
      report.sessions++;
      report.messages += want.count;
      if (want.count !== have.count || want.hex() !== have.hex()) {
        report.ok = false;
        report.differing++;
        if (report.differences.length < 100)
          report.differences.push({
            sourceId: s.sourceId,
            sessionId: s.session.id,
            source: { messages: want.count, sha256: want.hex() },
            hearth: { messages: have.count, sha256: have.hex() },
          });
      }
    }
  } finally {
    source.noHome.counting = true;
  }
  return report;
}

class Digest {
  private readonly hash = createHash("sha256");
  count = 0;
  add(fields: unknown[]): void {
    this.hash.update(JSON.stringify(fields));
    this.hash.update("\n");
    this.count++;
  }
  hex(): string {
    return this.hash.copy().digest("hex");
  }
}

/** A message as write() would store it: messageValues' columns, then its archived state. */
function fromRow(r: ImportMessageRow): unknown[] {
  return [...messageValues(r.message), r.active, r.archivedReason];
}

/** A stored message in the same columns. */
function fromMessage(m: Message): unknown[] {
  const text = typeof m.content === "string";
  return [
    m.role,
    text ? m.content : JSON.stringify(m.content),
    text ? "text" : "json",
    m.name,
    m.toolCalls === null ? null : JSON.stringify(m.toolCalls),
    m.toolCallId,
    m.tokensIn,
    m.tokensOut,
    m.createdAt,
    m.clientId,
    m.metadata === null ? null : JSON.stringify(m.metadata),
    m.active,
    m.archivedReason,
  ];
}
