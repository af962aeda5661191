/**
 * What hearth import reads from any source (Hermes Agent's state.db,
 * OpenClaw's state dir): sessions in an order where every parent comes
 * before its children, each with its messages in transcript order, already
 * mapped to what hearth stores; and a tally of what had no home.
 */
import type { ImportedMessage, ImportedSession } from "../store/imports.js";

export type SourceKind = "hermes" | "openclaw";

export interface SourceSession {
  session: ImportedSession;
  /** The session's id at the source. */
  sourceId: string;
  /** Read again on every call (import, then verify): the same messages, in the same order. */
  messages(): Iterable<ImportedMessage>;
}

export interface ImportSource {
  kind: SourceKind;
  /** The path imported (the state.db or the state dir). */
  path: string;
  /** The schema version read (Hermes), or null (a source without one). */
  schemaVersion: number | null;
  /** How the source was read: a live backup, a quiet copy, or files read directly. */
  snapshot: "backup" | "copy" | "files";
  /** Messages the sessions hold (for progress): an upper bound on what messages() yields. */
  messageTotal: number;
  /** The prefix of every message clientId from this source kind. */
  clientIdPrefix: string;
  sessions(): Iterable<SourceSession>;
  /** What has no home in hearth, by kind; filled while sessions and messages are read. */
  noHome: Tally;
  /** Problems found while reading that were skipped, not fatal (a broken JSONL line), in words. */
  problems: string[];
  close(): void;
}

/** Counts by kind ("message.reasoning_details", "table.gateway_routing", ...). */
export class Tally {
  private readonly counts = new Map<string, number>();
  /** Only while counting is on: a verification re-reads the source and must not count twice. */
  counting = true;

  add(kind: string, n = 1): void {
    if (!this.counting || n === 0) return;
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + n);
  }

  toJSON(): Record<string, number> {
    return Object.fromEntries([...this.counts].sort(([a], [b]) => a.localeCompare(b)));
  }
}

/** Epoch milliseconds from seconds, or undefined for a value no clock produced (NaN, text, far future). */
export function secondsToMs(value: unknown): number | undefined {
  if (typeof value !== "number" || !Number.isFinite(value)) return undefined;
  const ms = Math.round(value * 1000);
  // 1990 to 2200: a damaged or foreign cell outside is no time.
  return ms >= 631_152_000_000 && ms <= 7_258_118_400_000 ? ms : undefined;
}

/** Session ids ordered so that each parent comes before its children (a cycle is cut where found). */
export function parentsFirst(links: readonly { id?: unknown; parent?: unknown }[]): string[] {
  const parentOf = new Map(
    links.map((l) => [String(l.id), l.parent == null ? null : String(l.parent)]),
  );
  const out: string[] = [];
  const placed = new Set<string>();
  for (const l of links) {
    const chain: string[] = [];
    let at: string | null = String(l.id);
    while (at !== null && !placed.has(at) && parentOf.has(at) && !chain.includes(at)) {
      chain.push(at);
      at = parentOf.get(at) ?? null;
    }
    for (const id of chain.reverse()) {
      placed.add(id);
      out.push(id);
    }
  }
  return out;
}
