import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { profileDir } from "../config/paths.js";
import { HearthError } from "../errors.js";
import { ensurePrivateDir } from "../files/create.js";
import { maskArgv } from "../mask-secrets.js";
import { describeHolders, holderJson, readHolders } from "./holders.js";
import { currentIdentity, liveness, type ProcessIdentity } from "./identity.js";
import { inodeLocks, type LockedDatabase } from "./inode-locks.js";
import { claimInstance } from "./instance-lock.js";
import { runDir, writeJsonAtomic } from "./markers.js";

/** The informational record next to the gateway lock; it never decides anything. */
export interface GatewayRecord extends ProcessIdentity {
  argv: string[];
  since: string;
  profile: string;
  dbPath: string;
  /** Where its HTTP API listens, once it does (the dashboard's chat proxies to it). */
  address?: string;
  /** Set when it began to drain: by this time (epoch ms) it will have let the lock go. */
  drainingUntil?: number;
}

export interface GatewayLock {
  readonly profile: string;
  readonly recordPath: string;
  /** Add the address the gateway listens on to its record (written after listen). */
  announce(address: string): void;
  /** Say in the record that it drains and lets the lock go by `untilMs` (epoch ms): a new start waits for that. */
  draining(untilMs: number): void;
  release(): void;
}

/**
 * claim(), and when another gateway holds the lock while its record says it
 * drains (its process alive by identity), try again until the time it gave
 * (plus a second): a restart that comes while its predecessor finishes its
 * turns starts once that one is gone, instead of exiting 78 for something
 * waiting fixes (issue 41.2). The kernel lock still decides; the record
 * only says how long to keep asking.
 */
export async function claimAfterDrain(
  claim: () => GatewayLock,
  recordPath: string,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
): Promise<GatewayLock> {
  // A holder that finished its drain removes its record just before it lets
  // the lock go: a record gone while the lock is still held is that instant,
  // so it is asked again for a while (RECORD_GONE_MS), not refused at once.
  let recordGoneAt: number | undefined;
  for (;;) {
    try {
      return claim();
    } catch (err) {
      if (!(err instanceof HearthError) || err.code !== "HEARTH_GATEWAY_RUNNING") throw err;
      const record = readRecord(recordPath);
      if (!record) {
        recordGoneAt ??= Date.now();
        if (Date.now() - recordGoneAt > RECORD_GONE_MS) throw err;
        await sleep(100);
        continue;
      }
      const until = record.drainingUntil;
      if (until === undefined || liveness(record) !== "alive") throw err;
      if (Date.now() > until + 1_000) throw err;
      await sleep(100);
    }
  }
}

/** How long a held lock without a record is asked again (its holder between the two steps of its release). */
const RECORD_GONE_MS = 2_000;

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
  const recordPath = gatewayRecordPath(store.home, store.profile);
  if (!locks.tryGateway()) throw runningError(store, recordPath);
  try {
    const identity = currentIdentity();
    if (identity) {
      const record: GatewayRecord = {
        ...identity,
        argv: maskArgv(process.argv),
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
    announce: (address) => announce(recordPath, address),
    draining: (untilMs) => amend(recordPath, { drainingUntil: untilMs }),
    release: () => {
      const record = readRecord(recordPath);
      if (record?.pid === process.pid) rmSync(recordPath, { force: true });
      locks.releaseGateway();
    },
  };
}

/**
 * The gateway lock of a store on PostgreSQL: several gateways on several
 * hosts serve one profile there, so the lock is per home (a kernel lock on
 * run/gateway.lock of the profile in this home), not per database. A second
 * gateway of the same home and profile is refused with
 * HEARTH_GATEWAY_RUNNING; the record beside it is the same as on SQLite.
 */
export function claimHomeGateway(place: {
  home: string;
  profile: string;
  path: string;
}): GatewayLock {
  const dir = runDir(profileDir(place.home, place.profile));
  const instance = claimInstance(join(dir, "gateway.lock"), {
    code: "HEARTH_GATEWAY_RUNNING",
    what: `another gateway already serves profile ${place.profile} from ${place.home}`,
    hint: "use the running gateway, or stop it first (kill -TERM <pid>); another host (another home) may run its own",
  });
  const recordPath = gatewayRecordPath(place.home, place.profile);
  try {
    const identity = currentIdentity();
    if (identity)
      writeJsonAtomic(recordPath, {
        ...identity,
        argv: maskArgv(process.argv),
        since: new Date().toISOString(),
        profile: place.profile,
        dbPath: place.path,
      } satisfies GatewayRecord);
  } catch {
    // Detail only; the lock is held either way.
  }
  return {
    profile: place.profile,
    recordPath,
    announce: (address) => announce(recordPath, address),
    draining: (untilMs) => amend(recordPath, { drainingUntil: untilMs }),
    release: () => {
      if (readRecord(recordPath)?.pid === process.pid) rmSync(recordPath, { force: true });
      instance.release();
    },
  };
}

function announce(recordPath: string, address: string): void {
  // Detail only: without it the dashboard's chat says no gateway is reachable.
  amend(recordPath, { address });
}

/** Add fields to this process's own record (detail only: a failure changes nothing). */
function amend(recordPath: string, fields: Partial<GatewayRecord>): void {
  const record = readRecord(recordPath);
  if (record?.pid !== process.pid) return;
  try {
    writeJsonAtomic(recordPath, { ...record, ...fields });
  } catch {
    // the lock is held either way
  }
}

/** The record beside a profile's gateway lock: run/gateway.json of its profile directory. */
export function gatewayRecordPath(home: string, profile: string): string {
  return join(runDir(profileDir(home, profile)), "gateway.json");
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
