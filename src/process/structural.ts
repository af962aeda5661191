import { HearthError } from "../errors.js";
import {
  assertHoldersKnown,
  describeHolders,
  type Holder,
  holderJson,
  readHolders,
  readHoldersSettled,
} from "./holders.js";
import type { InodeLocks } from "./inode-locks.js";

export interface StructuralOptions {
  /**
   * The operation replaces or rewrites files (restore, journal-mode change,
   * schema upgrade): then no other process may hold the database at all,
   * readers included. Default false: hearth readers may stay.
   */
  exclusiveFiles?: boolean;
}

/**
 * Take the structural gate exclusively, now or never (P4): refuse with
 * HEARTH_STORE_HELD, naming every holder, while any other writer (or any
 * process that is not hearth, or with `exclusiveFiles` any process at all)
 * holds the database; refuse with HEARTH_HOLDERS_UNKNOWN when that cannot be
 * told. Returns the hearth readers that stay. The caller must call
 * locks.endStructural() when done; on refusal the gate is already back.
 */
export function claimStructural(
  locks: InodeLocks,
  doing: string,
  options: StructuralOptions = {},
): Holder[] {
  const path = locks.path;
  if (!locks.tryStructural()) {
    throw heldError(
      path,
      doing,
      blockers(path, options),
      "another process holds the structural gate",
    );
  }
  try {
    const report = readHoldersSettled(path, { ghosts: false });
    assertHoldersKnown(report, doing);
    const blocking = report.holders.filter((h) => blocks(h, options));
    if (blocking.length > 0) throw heldError(path, doing, blocking);
    return report.holders;
  } catch (err) {
    locks.endStructural();
    throw err;
  }
}

function blocks(h: Holder, options: StructuralOptions): boolean {
  // A parked hearth process (M5) closed every connection and holds only hearth's own lock bytes.
  if (h.roles.length > 0 && h.roles.every((r) => r === "parked")) return false;
  if (options.exclusiveFiles) return true;
  // Only a hearth process that says it is a pure reader may stay; anything else might write.
  return !(h.roles.length > 0 && h.roles.every((r) => r === "reader"));
}

function blockers(path: string, options: StructuralOptions): Holder[] {
  try {
    return readHolders(path, { ghosts: false }).holders.filter((h) => blocks(h, options));
  } catch {
    return [];
  }
}

function heldError(path: string, doing: string, holders: Holder[], fallback?: string): HearthError {
  const who =
    holders.length > 0
      ? `${holders.length} other process(es) hold it:\n${describeHolders(holders)}`
      : (fallback ?? "another process holds it");
  return new HearthError("HEARTH_STORE_HELD", `refusing to ${doing} ${path}: ${who}`, {
    resource: path,
    hint: "stop them (hearth ps lists them) and run it again; nothing was changed",
    details: { holders: holders.map(holderJson) },
  });
}
