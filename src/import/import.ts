/**
 * The entry of hearth import: open the profile's store and the source,
 * run the import (or its dry run) and the verification, close both.
 */
import { join } from "node:path";
import { resolveLocation } from "../config/paths.js";
import { openStore } from "../store/open.js";
import type { OnProgress } from "../store/progress.js";
import { openHermesSource } from "./hermes/read.js";
import { openOpenClawSource } from "./openclaw/read.js";
import { type ImportReport, runImport } from "./run.js";
import type { SourceKind } from "./source.js";

export interface ImportCommand {
  kind: SourceKind;
  /** The Hermes state.db, or OpenClaw's state dir. */
  path: string;
  home?: string | undefined;
  profile?: string | undefined;
  dryRun?: boolean;
  verify?: boolean;
  batch?: number;
  /** How long the snapshot waits for a source its writer holds locked (default 10 s). */
  sourceBusyMs?: number;
  onProgress?: OnProgress;
}

/** How long the snapshot waits for a source its writer holds locked (a rollback journal's exclusive lock). */
const SOURCE_BUSY_MS = 10_000;

export async function importInto(o: ImportCommand): Promise<ImportReport> {
  const where = resolveLocation({ home: o.home, profile: o.profile });
  // The source first: a source refused leaves hearth's home as it was.
  const source =
    o.kind === "openclaw"
      ? openOpenClawSource(o.path)
      : await openHermesSource(o.path, {
          // The snapshot is made in hearth's home, on its disk, never in a RAM-backed /tmp.
          workDir: join(where.home, "import"),
          busyTimeoutMs: o.sourceBusyMs ?? SOURCE_BUSY_MS,
          ...(o.onProgress ? { onProgress: o.onProgress } : {}),
        });
  try {
    const store = await openStore({ ...where, role: o.dryRun ? "reader" : "writer" });
    try {
      return await runImport(store, source, {
        ...(o.dryRun === undefined ? {} : { dryRun: o.dryRun }),
        ...(o.verify === undefined ? {} : { verify: o.verify }),
        ...(o.batch === undefined ? {} : { batch: o.batch }),
        ...(o.onProgress ? { onProgress: o.onProgress } : {}),
      });
    } finally {
      await store.close();
    }
  } finally {
    source.close();
  }
}
