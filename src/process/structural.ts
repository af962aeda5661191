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

/** How many times the gate is asked while its holder cannot be named, and how far apart. */
const GATE_ATTEMPTS = 5;
const GATE_RETRY_MS = 25;

/**
 * Test-only: `gateRefused` runs when the gate was refused, before the census
 * looks for its holder (the instant a momentary holder lets go);
 * `gateRetry` before each further attempt.
 */
export const structuralHooks: { gateRefused?: () => void; gateRetry?: () => void } = {};

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
  // A gate held for an instant (the dashboard's one-row writer, a process
  // exiting) may be free again by the time the census looks for its holder:
  // then ask the gate again instead of refusing without a name. A holder
  // that stays is named; one that stays and cannot be named is refused
  // after the last attempt (fail closed).
  for (let attempt = 1; !locks.tryStructural(); attempt++) {
    const holders = blockers(path, options);
    if (holders.length > 0 || attempt >= GATE_ATTEMPTS)
      throw heldError(path, doing, holders.length > 0 ? holders : present(path), GATE_HELD);
    structuralHooks.gateRetry?.();
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, GATE_RETRY_MS);
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
  structuralHooks.gateRefused?.();
  try {
    return readHolders(path, { ghosts: false }).holders.filter((h) => blocks(h, options));
  } catch {
    return [];
  }
}

/**
 * Every process holding the store but parked ones: when the gate stays held
 * and no process that may write can be found, one of these holds it (a
 * reader becoming a writer, whose writer presence is not published yet).
 */
function present(path: string): Holder[] {
  try {
    return readHolders(path, { ghosts: false }).holders.filter(
      (h) => !(h.roles.length > 0 && h.roles.every((r) => r === "parked")),
    );
  } catch {
    return [];
  }
}

const GATE_HELD = "another process holds the structural gate";

function heldError(path: string, doing: string, holders: Holder[], gate?: string): HearthError {
  const who =
    holders.length > 0
      ? `${gate ? `${gate}; ` : ""}${holders.length} other process(es) hold it:\n${describeHolders(holders)}`
      : (gate ?? "another process holds it");
  return new HearthError("HEARTH_STORE_HELD", `refusing to ${doing} ${path}: ${who}`, {
    resource: path,
    hint: "stop them (hearth ps lists them) and run it again; nothing was changed",
    details: { holders: holders.map(holderJson) },
  });
}
