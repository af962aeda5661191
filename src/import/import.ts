/**
 * The entry of hearth import: open the profile's store and the source,
 * run the import (or its dry run) and the verification, close both.
 */
import { rmdirSync } from "node:fs";
import { join } from "node:path";
import { resolveLocation } from "../config/paths.js";
import { isHearthError } from "../errors.js";
import { lstatOrNull } from "../files/inspect.js";
import type { Store } from "../store/api.js";
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
  const workDir = join(where.home, "import");
  // What a dry run may remove again: the directories it finds missing.
  const created = o.dryRun ? [workDir, where.home].filter((d) => !lstatOrNull(d)) : [];
  try {
    // The source first: a source refused leaves hearth's home as it was.
    const source =
      o.kind === "openclaw"
        ? openOpenClawSource(o.path)
        : await openHermesSource(o.path, {
            // The snapshot is made in hearth's home, on its disk, never in a RAM-backed /tmp.
            workDir,
            busyTimeoutMs: o.sourceBusyMs ?? SOURCE_BUSY_MS,
            ...(o.onProgress ? { onProgress: o.onProgress } : {}),
          });
    try {
      const store = o.dryRun ? await openIfThere(where) : await openStore(where);
      try {
        return await runImport(store, source, {
          ...(o.dryRun === undefined ? {} : { dryRun: o.dryRun }),
          ...(o.verify === undefined ? {} : { verify: o.verify }),
          ...(o.batch === undefined ? {} : { batch: o.batch }),
          ...(o.onProgress ? { onProgress: o.onProgress } : {}),
        });
      } finally {
        await store?.close();
      }
    } finally {
      source.close();
    }
  } finally {
    // A dry run leaves the home as it found it: the snapshot's working
    // directory (and the home) go again when this run made them and they
    // are empty; anything else in them stays.
    for (const dir of created) {
      try {
        rmdirSync(dir);
      } catch {
        // Not empty, or already gone: left as it is.
      }
    }
  }
}

/** A dry run's view of the profile: its store read-only, or null when it has none yet (everything is new). */
async function openIfThere(where: { home: string; profile: string }): Promise<Store | null> {
  try {
    return await openStore({ ...where, role: "reader" });
  } catch (err) {
    if (isHearthError(err, "HEARTH_STORE_NOT_FOUND")) return null;
    throw err;
  }
}
