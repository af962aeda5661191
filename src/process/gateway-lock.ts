import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { profileDir } from "../config/paths.js";
import { HearthError } from "../errors.js";
import { ensurePrivateDir } from "../files/create.js";
import { describeHolders, holderJson, readHolders } from "./holders.js";
import { currentIdentity, liveness, type ProcessIdentity } from "./identity.js";
import { inodeLocks, type LockedDatabase } from "./inode-locks.js";
import { runDir, writeJsonAtomic } from "./markers.js";

/** The informational record next to the gateway lock; it never decides anything. */
export interface GatewayRecord extends ProcessIdentity {
  argv: string[];
  since: string;
  profile: string;
  dbPath: string;
  /** Where its HTTP API listens, once it does (the dashboard's chat proxies to it). */
  address?: string;
}

export interface GatewayLock {
  readonly profile: string;
  readonly recordPath: string;
  /** Add the address the gateway listens on to its record (written after listen). */
  announce(address: string): void;
  release(): void;
}

/**
 * Become the one gateway of the store's profile (P3). The kernel decides:
 * an exclusive OFD lock on the database inode, which dies with its holder,
 * so a crash or a reboot never leaves a gateway "running". A record file
 * (pid, start ticks, boot id, argv) adds detail for the refusal message and
 * `hearth ps`, but a stale or forged record never blocks a start: a free
 * lock always wins. A held lock refuses with HEARTH_GATEWAY_RUNNING naming
 * the holder.
 */
export function claimGateway(store: LockedDatabase): GatewayLock {
  const locks = store[inodeLocks];
  const recordPath = join(runDir(profileDir(store.home, store.profile)), "gateway.json");
  if (!locks.tryGateway()) throw runningError(store, recordPath);
  try {
    const identity = currentIdentity();
    if (identity) {
      const record: GatewayRecord = {
        ...identity,
        argv: process.argv,
        since: new Date().toISOString(),
        profile: store.profile,
        dbPath: store.path,
      };
      ensurePrivateDir(runDir(profileDir(store.home, store.profile)));
      writeJsonAtomic(recordPath, record);
    }
  } catch {
    // The record is detail only; the lock is held either way.
  }
  return {
    profile: store.profile,
    recordPath,
    announce: (address) => {
      const record = readRecord(recordPath);
      if (record?.pid !== process.pid) return;
      try {
        writeJsonAtomic(recordPath, { ...record, address });
      } catch {
        // Detail only, as above: without it the dashboard's chat says no gateway is reachable.
      }
    },
    release: () => {
      const record = readRecord(recordPath);
      if (record?.pid === process.pid) rmSync(recordPath, { force: true });
      locks.releaseGateway();
    },
  };
}

export function readRecord(path: string): GatewayRecord | undefined {
  try {
    const value = JSON.parse(readFileSync(path, "utf8")) as GatewayRecord;
    return typeof value.pid === "number" && typeof value.bootId === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

function runningError(store: LockedDatabase, recordPath: string): HearthError {
  let gateways: ReturnType<typeof readHolders>["holders"] = [];
  try {
    gateways = readHolders(store.path, { ghosts: false }).holders.filter(
      (h) => h.kind === "gateway",
    );
  } catch {
    gateways = [];
  }
  const record = readRecord(recordPath);
  const recordAlive =
    record && liveness(record) === "alive" && gateways.some((g) => g.pid === record.pid);
  const who =
    gateways.length > 0
      ? `\n${describeHolders(gateways)}`
      : " (hearth could not name its process; hearth ps may tell more)";
  return new HearthError(
    "HEARTH_GATEWAY_RUNNING",
    `another gateway already serves profile ${store.profile} (${store.path}):${who}`,
    {
      resource: store.path,
      hint: "use the running gateway, or stop it first (kill -TERM <pid>)",
      details: {
        holders: gateways.map(holderJson),
        ...(recordAlive ? { record } : {}),
      },
    },
  );
}
