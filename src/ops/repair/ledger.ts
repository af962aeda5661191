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
import { nodeCrypto } from "../../builtins.js";
import { HearthError } from "../../errors.js";
import { lstatOrNull } from "../../files/inspect.js";

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
    return nodeCrypto()
      .createHash("sha256")
      .update(`${size}\0`)
      .update(head)
      .update(tail)
      .digest("hex");
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

/**
 * The ledger as written by earlier attempts. A missing ledger is empty; one
 * that exists but cannot be read, parsed or trusted (not a regular file of
 * ours, bad JSON, entries of the wrong shape) throws
 * HEARTH_REPAIR_LEDGER_UNREADABLE: reading it as empty would reset the
 * attempt budget (M3), so "cannot tell" refuses.
 */
export function readLedger(profileDir: string): Ledger {
  const path = ledgerPath(profileDir);
  const stats = lstatOrNull(path);
  if (!stats) return {};
  const unreadable = (why: string, cause?: unknown) =>
    new HearthError(
      "HEARTH_REPAIR_LEDGER_UNREADABLE",
      `cannot trust the repair ledger ${path}: ${why}`,
      {
        resource: path,
        hint: `inspect ${path}; if the attempts it recorded no longer matter, move it aside (mv ${path} ${path}.bad) and run repair again`,
        ...(cause === undefined ? {} : { cause }),
      },
    );
  if (!stats.isFile()) throw unreadable("it is not a regular file");
  if (typeof process.getuid === "function" && stats.uid !== process.getuid())
    throw unreadable(`it is owned by uid ${stats.uid}, not by this user`);
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw unreadable((err as Error).message, err);
  }
  if (!value || typeof value !== "object" || Array.isArray(value))
    throw unreadable("it does not hold a JSON object");
  for (const [key, entry] of Object.entries(value)) {
    if (!isEntry(entry)) throw unreadable(`the entry for ${key.slice(0, 16)}… is malformed`);
  }
  return value as Ledger;
}

function isEntry(value: unknown): value is LedgerEntry {
  const e = value as Partial<LedgerEntry> | null;
  return (
    typeof e === "object" &&
    e !== null &&
    Number.isInteger(e.attempts) &&
    Number.isInteger(e.failures) &&
    (e.failures as number) >= 0 &&
    typeof e.lastAttemptAt === "string" &&
    (e.lastError === null || typeof e.lastError === "string") &&
    typeof e.repaired === "boolean"
  );
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
