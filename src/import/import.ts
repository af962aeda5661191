/**
 * The entry of hearth import: open the profile's store and the source,
 * run the import (or its dry run) and the verification, close both.
 */
import { join } from "node:path";
import { openStore } from "../store/open.js";
import type { OnProgress } from "../store/progress.js";
import { openHermesSource } from "./hermes/read.js";
import { type ImportReport, runImport } from "./run.js";
import type { SourceKind } from "./source.js";

export interface ImportCommand {
  kind: SourceKind;
  /** The Hermes state.db. */
  path: string;
  home?: string | undefined;
  profile?: string | undefined;
  dryRun?: boolean;
  verify?: boolean;
  batch?: number;
  onProgress?: OnProgress;
}

export async function importInto(o: ImportCommand): Promise<ImportReport> {
  const store = await openStore({
    ...(o.home === undefined ? {} : { home: o.home }),
    ...(o.profile === undefined ? {} : { profile: o.profile }),
    role: o.dryRun ? "reader" : "writer",
  });
  try {
    const source = await openHermesSource(o.path, {
      // The snapshot is made beside the store, on its disk, never in a RAM-backed /tmp.
      workDir: join(store.home, "import"),
      busyTimeoutMs: store.config.store.busyTimeoutMs,
      ...(o.onProgress ? { onProgress: o.onProgress } : {}),
    });
    try {
      return await runImport(store, source, {
        ...(o.dryRun === undefined ? {} : { dryRun: o.dryRun }),
        ...(o.verify === undefined ? {} : { verify: o.verify }),
        ...(o.batch === undefined ? {} : { batch: o.batch }),
        ...(o.onProgress ? { onProgress: o.onProgress } : {}),
      });
    } finally {
      source.close();
    }
  } finally {
    await store.close();
  }
}
