/**
 * hearth import: a source's sessions and messages written into a profile's
 * store in batches, each batch one transaction through store.imports, so a
 * run killed at any instant is finished by the next run; then the
 * verification pass. Returns a typed report; never prints.
 */
import { HearthError } from "../errors.js";
import { failpoint } from "../failpoints.js";
import type { Store } from "../store/api.js";
import type { ImportedMessage } from "../store/imports.js";
import type { OnProgress } from "../store/progress.js";
import type { ImportSource, SourceKind } from "./source.js";
import { type VerifyReport, verifyImport } from "./verify.js";

export interface ImportOptions {
  dryRun?: boolean;
  /** Run the verification pass after the import (default true; not with dryRun). */
  verify?: boolean;
  /** Messages per transaction (default 1000). */
  batch?: number;
  onProgress?: OnProgress;
}

export interface ImportReport {
  kind: SourceKind;
  source: string;
  schemaVersion: number | null;
  snapshot: ImportSource["snapshot"];
  dryRun: boolean;
  sessions: { seen: number; created: number; existing: number; titlesRenamed: number };
  /** seen: mapped from the source; inserted: written by this run (would be, with dryRun); skipped: already in hearth. */
  messages: { seen: number; inserted: number; skipped: number; restated: number };
  /** What has no home in hearth, by kind (counts). */
  noHome: Record<string, number>;
  problems: string[];
  durationMs: number;
  messagesPerSecond: number;
  verify: VerifyReport | null;
}

export async function runImport(
  store: Store | null,
  source: ImportSource,
  options: ImportOptions = {},
): Promise<ImportReport> {
  const started = performance.now();
  const dryRun = options.dryRun === true;
  // null: a dry run on a profile that has no store yet.
  if (store === null && !dryRun) throw new TypeError("an import that writes needs a store");
  const batchSize = options.batch ?? 1000;
  const report: ImportReport = {
    kind: source.kind,
    source: source.path,
    schemaVersion: source.schemaVersion,
    snapshot: source.snapshot,
    dryRun,
    sessions: { seen: 0, created: 0, existing: 0, titlesRenamed: 0 },
    messages: { seen: 0, inserted: 0, skipped: 0, restated: 0 },
    noHome: {},
    problems: source.problems,
    durationMs: 0,
    messagesPerSecond: 0,
    verify: null,
  };
  const progress = (done: number, total = Math.max(source.messageTotal, done)) =>
    options.onProgress?.({ op: "import", phase: "messages", done, total, unit: "messages" });
  progress(0);
  for (const s of source.sessions()) {
    report.sessions.seen++;
    if (store === null || dryRun) {
      await dryRunSession(store, s.session.id, s.messages(), report);
    } else {
      let first = true;
      let batch: ImportedMessage[] = [];
      const flush = async () => {
        const r = await store.imports.write(s.session, batch).catch((err: unknown) => {
          throw unrepresentable(err, source, s.sourceId);
        });
        if (first) {
          if (r.created) report.sessions.created++;
          else report.sessions.existing++;
          if (r.created && r.storedTitle !== s.session.title) report.sessions.titlesRenamed++;
          first = false;
        }
        report.messages.inserted += r.inserted;
        report.messages.skipped += r.skipped;
        report.messages.restated += r.restated;
        report.messages.seen += batch.length;
        progress(report.messages.seen);
        batch = [];
        failpoint("import.after-batch");
      };
      for (const m of s.messages()) {
        batch.push(m);
        if (batch.length >= batchSize) await flush();
      }
      if (first || batch.length > 0) await flush();
    }
  }
  // The end: rows with no home were counted in the total but never written.
  progress(report.messages.seen, report.messages.seen);
  report.noHome = source.noHome.toJSON();
  report.durationMs = Math.round(performance.now() - started);
  report.messagesPerSecond =
    report.durationMs > 0 ? Math.round((report.messages.seen * 1000) / report.durationMs) : 0;
  if (store !== null && !dryRun && options.verify !== false)
    report.verify = await verifyImport(store, source);
  return report;
}

/** A value the store cannot hold (text with NUL on PostgreSQL), said about the source's session. */
function unrepresentable(err: unknown, source: ImportSource, sourceId: string): unknown {
  const e = err as { code?: unknown; message?: unknown };
  if (e?.code !== "HEARTH_INVALID_ARG" || !String(e.message).includes("NUL")) return err;
  return new HearthError(
    "HEARTH_VALUE_UNREPRESENTABLE",
    `session ${sourceId} of ${source.path} holds text this store cannot hold: ${String(e.message)}; what came before it is imported`,
    {
      resource: source.path,
      hint: "import into a SQLite profile, or remove the NUL characters at the source, then run the import again",
      cause: err,
    },
  );
}

/** What a run would do for one session: nothing is written. No store yet: all of it is new. */
async function dryRunSession(
  store: Store | null,
  id: string,
  messages: Iterable<ImportedMessage>,
  report: ImportReport,
): Promise<void> {
  const stored = new Set<string>();
  if (store !== null && (await store.sessions.get(id))) {
    report.sessions.existing++;
    let after = -1;
    for (;;) {
      const page = await store.messages.load(id, {
        includeHistory: true,
        afterOrdinal: after,
        limit: 10_000,
      });
      for (const m of page) if (m.clientId) stored.add(m.clientId);
      if (page.length < 10_000) break;
      after = page[page.length - 1]!.ordinal;
    }
  } else report.sessions.created++;
  for (const m of messages) {
    report.messages.seen++;
    if (stored.has(m.clientId)) report.messages.skipped++;
    else report.messages.inserted++;
  }
}
