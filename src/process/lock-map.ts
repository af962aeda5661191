/**
 * Where hearth's own kernel locks sit on the database inode (P2, P5).
 *
 * Every lock is an OFD byte-range lock on the database file itself, far
 * beyond SQLite's lock bytes (0x40000000–0x400001FF), so SQLite never sees
 * them and /proc/locks on the database inode tells the whole story. OFD
 * locks show pid -1 in /proc/locks, so each process also holds a presence
 * lock whose offset encodes its pid, kind and role: anyone who can read
 * /proc/locks (every user) can name the holder without reading its
 * descriptor table.
 */

// The single-byte locks below are spaced apart: the kernel merges adjacent
// ranges one owner holds with the same type into one /proc/locks line.

/** Writers hold it shared for as long as they can write; structural work takes it exclusive (P4). */
export const GATE_OFFSET = 2 ** 39;
/** The write queue's turnstile: at most one process waits for WRITE_OFFSET at a time. */
export const TURNSTILE_OFFSET = 2 ** 39 + 16;
/** Held exclusive around each write transaction. */
export const WRITE_OFFSET = 2 ** 39 + 32;
/** Held exclusive by the one gateway serving this database (P3). */
export const GATEWAY_OFFSET = 2 ** 39 + 48;

export const PRESENCE_BASE = 2 ** 40;
/** Larger than Linux's PID_MAX_LIMIT (2^22). */
const PID_SPAN = 2 ** 23;
const ROLE_SLOTS = 4;

// Append only: a kind's index is part of its lock offsets, which other running builds read.
export const PROCESS_KINDS = [
  "unknown",
  "gateway",
  "dashboard",
  "worker",
  "cli",
  "scheduler",
  "acp",
] as const;
export type ProcessKind = (typeof PROCESS_KINDS)[number];

/**
 * reader: holds a read-only connection; writer: may write; surgeon: runs a
 * structural operation; parked: a long-lived process that closed its
 * connections for a maintenance window (M5) and holds nothing SQLite sees.
 */
export const PRESENCE_ROLES = ["reader", "writer", "surgeon", "parked"] as const;
export type PresenceRole = (typeof PRESENCE_ROLES)[number];

export interface Presence {
  pid: number;
  kind: ProcessKind;
  role: PresenceRole;
}

export function presenceOffset(p: Presence): number {
  const kind = PROCESS_KINDS.indexOf(p.kind);
  const role = PRESENCE_ROLES.indexOf(p.role);
  if (kind < 0 || role < 0 || !Number.isSafeInteger(p.pid) || p.pid <= 0 || p.pid >= PID_SPAN) {
    throw new RangeError(`cannot encode presence ${JSON.stringify(p)}`);
  }
  return PRESENCE_BASE + (kind * ROLE_SLOTS + role) * PID_SPAN + p.pid;
}

/** The presence a lock at `offset` (of length 1) stands for, or undefined when it is not one. */
export function decodePresence(offset: number): Presence | undefined {
  if (!Number.isSafeInteger(offset) || offset < PRESENCE_BASE) return undefined;
  const rel = offset - PRESENCE_BASE;
  const slot = Math.floor(rel / PID_SPAN);
  const pid = rel % PID_SPAN;
  const kind = PROCESS_KINDS[Math.floor(slot / ROLE_SLOTS)];
  const role = PRESENCE_ROLES[slot % ROLE_SLOTS];
  if (!kind || !role || pid === 0) return undefined;
  return { pid, kind, role };
}
