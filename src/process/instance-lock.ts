import { closeSync, constants, openSync, readFileSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import * as fsx from "fs-native-extensions";
import { HearthError, type HearthErrorCode } from "../errors.js";
import { ensurePrivateDir } from "../files/create.js";
import { maskArgv } from "../mask-secrets.js";
import { currentIdentity, liveness, type ProcessIdentity } from "./identity.js";
import { writeJsonAtomic } from "./markers.js";

/** Detail next to an instance lock; it never decides anything (the kernel lock does). */
export interface InstanceRecord extends ProcessIdentity {
  argv: string[];
  since: string;
}

export interface InstanceLock {
  readonly path: string;
  release(): void;
}

/**
 * Be the one process of its kind for a resource (one scheduler per profile,
 * one `hearth start` per home): an exclusive OFD lock on a lock file, held
 * for the process's life and dropped by the kernel when it dies, so a crash
 * or a reboot never leaves it "running". A record (pid, start ticks, boot
 * id, argv) beside it names the holder in the refusal; a stale or forged
 * record never blocks a start.
 */
export function claimInstance(
  lockPath: string,
  refusal: { code: HearthErrorCode; what: string; hint: string },
): InstanceLock {
  ensurePrivateDir(dirname(lockPath));
  const fd = openSync(lockPath, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  if (!fsx.tryLock(fd, 0, 1)) {
    closeSync(fd);
    const record = readInstanceRecord(`${lockPath}.json`);
    const who =
      record && liveness(record) !== "dead"
        ? `pid ${record.pid} (${maskArgv(record.argv).join(" ")}) since ${record.since}`
        : "a process hearth could not name (hearth ps may tell more)";
    throw new HearthError(refusal.code, `${refusal.what}: ${who}`, {
      resource: lockPath,
      hint: refusal.hint,
      details: record ? { holder: { pid: record.pid, since: record.since } } : {},
    });
  }
  const recordPath = `${lockPath}.json`;
  const identity = currentIdentity();
  if (identity) {
    try {
      writeJsonAtomic(recordPath, {
        ...identity,
        argv: maskArgv(process.argv),
        since: new Date().toISOString(),
      } satisfies InstanceRecord);
    } catch {
      // detail only
    }
  }
  let released = false;
  return {
    path: lockPath,
    release: () => {
      if (released) return;
      released = true;
      if (readInstanceRecord(recordPath)?.pid === process.pid) rmSync(recordPath, { force: true });
      fsx.unlock(fd, 0, 1);
      closeSync(fd);
    },
  };
}

export function readInstanceRecord(path: string): InstanceRecord | undefined {
  try {
    const value = JSON.parse(readFileSync(path, "utf8")) as InstanceRecord;
    return typeof value.pid === "number" && typeof value.bootId === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}
