import { createHash } from "node:crypto";
import {
  closeSync,
  fstatSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";

/** After this many failed attempts on one fingerprint, repair stops and says what to do. */
export const MAX_ATTEMPTS = 3;
const SAMPLE = 64 * 1024;

/**
 * A fingerprint of the damage: the file size and its first and last 64 KiB,
 * with the header's change counters (bytes 24–27 and 92–95) masked, so that
 * touching the header alone does not make an old failure look new, while a
 * real repair (a rewritten file) does.
 */
export function fingerprintFile(path: string): string {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    const head = Buffer.alloc(Math.min(SAMPLE, size));
    readSync(fd, head, 0, head.length, 0);
    if (head.length >= 96) {
      head.fill(0, 24, 28);
      head.fill(0, 92, 96);
    }
    const tail = Buffer.alloc(Math.min(SAMPLE, size));
    readSync(fd, tail, 0, tail.length, Math.max(0, size - tail.length));
    return createHash("sha256").update(`${size}\0`).update(head).update(tail).digest("hex");
  } finally {
    closeSync(fd);
  }
}

export interface LedgerEntry {
  attempts: number;
  failures: number;
  lastAttemptAt: string;
  lastError: string | null;
  repaired: boolean;
}

export type Ledger = Record<string, LedgerEntry>;

export function ledgerPath(profileDir: string): string {
  return join(profileDir, "repair-ledger.json");
}

export function readLedger(profileDir: string): Ledger {
  try {
    const value = JSON.parse(readFileSync(ledgerPath(profileDir), "utf8")) as unknown;
    return value && typeof value === "object" ? (value as Ledger) : {};
  } catch {
    return {};
  }
}

export function recordAttempt(
  profileDir: string,
  fingerprint: string,
  error: string | null,
): LedgerEntry {
  const ledger = readLedger(profileDir);
  const previous = ledger[fingerprint] ?? {
    attempts: 0,
    failures: 0,
    lastAttemptAt: "",
    lastError: null,
    repaired: false,
  };
  const entry: LedgerEntry = {
    attempts: previous.attempts + 1,
    failures: previous.failures + (error === null ? 0 : 1),
    lastAttemptAt: new Date().toISOString(),
    lastError: error,
    repaired: error === null,
  };
  ledger[fingerprint] = entry;
  const path = ledgerPath(profileDir);
  writeFileSync(`${path}.tmp`, `${JSON.stringify(ledger, null, 2)}\n`, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
  return entry;
}
