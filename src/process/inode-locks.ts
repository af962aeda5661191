import { closeSync, constants, fstatSync, openSync } from "node:fs";
import fsx from "fs-native-extensions";
import { HearthError } from "../errors.js";
import { inodeKey } from "../files/inspect.js";
import { describeHolders, holderJson, readHolders } from "./holders.js";
import { processKind } from "./kind.js";
import {
  GATE_OFFSET,
  GATEWAY_OFFSET,
  type PresenceRole,
  type ProcessKind,
  presenceOffset,
} from "./lock-map.js";
import { type Marker, removeMarker, sweepStaleMarkers, writeMarker } from "./markers.js";
import { FairWriteLock } from "./write-lock.js";

/**
 * This process's kernel-held facts about one database inode (P2, P4, P5):
 * presence locks that name it to `hearth ps`, the structural gate writers
 * hold shared, and the fair write lock.
 *
 * Its descriptors are opened on demand and closed only by close(), which the
 * registry calls once no SQLite connection to the inode is left in the
 * process (closing any descriptor on a file drops the process's POSIX locks
 * on it, SQLite's included: F2).
 */
/** The key under which an open store hands its InodeLocks to the process layer (the gateway lock). */
export const inodeLocks = Symbol("hearth.inodeLocks");

/** What holds a database open in this process, as the process layer sees it: where, and its locks. */
export interface LockedDatabase {
  readonly home: string;
  readonly profile: string;
  readonly path: string;
  readonly [inodeLocks]: InodeLocks;
}

export class InodeLocks {
  readonly path: string;
  readonly writeLock: FairWriteLock;
  private key: string;
  private readFd: number | undefined;
  private writeFd: number | undefined;
  private readonly refs: Record<"reader" | "writer", number> = { reader: 0, writer: 0 };
  private readonly presences = new Map<PresenceRole, { fd: number; offset: number }>();
  private structural = false;
  private gateway = false;
  private suspended = false;
  private entering: Promise<void> | undefined;
  private marker: string | undefined;

  constructor(path: string, key: string) {
    this.path = path;
    this.key = key;
    this.writeLock = new FairWriteLock(
      () => this.writable(),
      () => this.busyError(),
    );
  }

  /**
   * Become a writer: hold the gate shared for as long as any writer store of
   * this process is open. While a structural operation holds it exclusive,
   * wait up to `waitMs` (polling, never blocking the loop), then refuse.
   */
  async enterWriter(waitMs: number): Promise<void> {
    if (this.refs.writer > 0) {
      this.refs.writer++;
      return;
    }
    if (this.entering) {
      // Another open in this process is already waiting for the gate.
      await this.entering.catch(() => undefined);
      return this.enterWriter(waitMs);
    }
    this.entering = this.takeGateShared(waitMs);
    try {
      await this.entering;
    } finally {
      this.entering = undefined;
    }
    this.refs.writer = 1;
    this.present("writer", this.writable());
  }

  private async takeGateShared(waitMs: number): Promise<void> {
    const fd = this.writable();
    const deadline = Date.now() + waitMs;
    for (let delay = 5; !fsx.tryLock(fd, GATE_OFFSET, 1, { shared: true }); ) {
      if (Date.now() >= deadline) throw this.surgeryError(waitMs);
      await new Promise((r) => setTimeout(r, Math.min(delay, Math.max(1, deadline - Date.now()))));
      delay = Math.min(delay * 2, 100);
    }
  }

  /** Leave an informational marker for `hearth ps`, sweeping stale ones first. Best effort. */
  mark(
    profileDir: string,
    profile: string,
    kind: ProcessKind,
    detail: Pick<Marker, "synchronous" | "offLoop"> = {},
  ): void {
    if (this.marker) return;
    try {
      sweepStaleMarkers(profileDir);
      this.marker = writeMarker(profileDir, { kind, profile, dbPath: this.path, ...detail });
    } catch {
      // Markers never gate anything; a read-only run directory only costs detail in hearth ps.
    }
  }

  /** The single-instance gateway lock (P3): exclusive, never waited for. */
  tryGateway(): boolean {
    if (this.gateway) return false;
    if (!fsx.tryLock(this.writable(), GATEWAY_OFFSET, 1)) return false;
    this.gateway = true;
    return true;
  }

  releaseGateway(): void {
    if (!this.gateway || this.writeFd === undefined) return;
    fsx.unlock(this.writeFd, GATEWAY_OFFSET, 1);
    this.gateway = false;
  }

  leaveWriter(): void {
    if (this.refs.writer === 0 || --this.refs.writer > 0) return;
    this.absent("writer");
    if (this.writeFd !== undefined && !this.structural) fsx.unlock(this.writeFd, GATE_OFFSET, 1);
  }

  enterReader(): void {
    if (this.refs.reader++ > 0) return;
    this.present("reader", this.readable());
  }

  leaveReader(): void {
    if (this.refs.reader === 0 || --this.refs.reader > 0) return;
    this.absent("reader");
  }

  /**
   * Take the gate exclusive without waiting (P4). Needs a writer in this
   * process (the gate is converted from shared in place). Returns false when
   * another process holds it.
   */
  tryStructural(): boolean {
    if (this.refs.writer === 0)
      throw new HearthError("HEARTH_INTERNAL", "internal: structural work needs a writer store");
    if (this.structural) return true;
    const fd = this.writable();
    if (!fsx.tryLock(fd, GATE_OFFSET, 1)) return false;
    this.structural = true;
    this.present("surgeon", fd);
    return true;
  }

  endStructural(): void {
    if (!this.structural) return;
    const fd = this.writable();
    // Converting exclusive to shared never waits.
    if (this.refs.writer > 0) fsx.tryLock(fd, GATE_OFFSET, 1, { shared: true });
    else fsx.unlock(fd, GATE_OFFSET, 1);
    this.absent("surgeon");
    this.structural = false;
  }

  /**
   * Park for a maintenance window (M5): give back the shared gate and the
   * reader and writer presence, so a structural operation can run, and name
   * this process "parked" instead. The gateway lock stays. References are
   * kept: resume() takes everything back.
   */
  suspend(): void {
    if (this.suspended) return;
    const fd = this.writable();
    this.present("parked", fd);
    this.absent("writer");
    this.absent("reader");
    if (this.refs.writer > 0 && !this.structural) fsx.unlock(fd, GATE_OFFSET, 1);
    this.suspended = true;
  }

  /**
   * Leave a window: take the gate shared again (waiting up to `waitMs` while
   * the structural operation still holds it, then HEARTH_MAINTENANCE_RUNNING,
   * staying parked) and the presence this process had. When the database
   * file was replaced during the window (restore, repair), `key` is its new
   * inode: the locks move there, the gateway lock included (refused with
   * HEARTH_GATEWAY_RUNNING if another process took it meanwhile).
   */
  async resume(waitMs: number, key: string = this.key): Promise<void> {
    if (!this.suspended) return;
    if (key !== this.key) this.rebind(key);
    if (this.gateway === false && this.hadGateway) {
      if (!fsx.tryLock(this.writable(), GATEWAY_OFFSET, 1)) {
        throw new HearthError(
          "HEARTH_GATEWAY_RUNNING",
          `another gateway took ${this.path} while this one was parked`,
          { resource: this.path, hint: "stop one of them; hearth ps names both" },
        );
      }
      this.gateway = true;
      this.hadGateway = false;
    }
    if (this.refs.writer > 0) await this.takeGateShared(waitMs);
    if (this.refs.writer > 0) this.present("writer", this.writable());
    if (this.refs.reader > 0) {
      this.present("reader", this.readable());
    }
    this.absent("parked");
    this.suspended = false;
  }

  private hadGateway = false;

  /** Move to a new inode of the same path: every lock on the old one is let go with its descriptors. */
  private rebind(key: string): void {
    this.hadGateway = this.gateway;
    this.gateway = false;
    this.presences.clear();
    this.closeDescriptors();
    this.readFd = undefined;
    this.writeFd = undefined;
    this.key = key;
    // Parked on the new inode at once, so the process is never unnamed.
    this.present("parked", this.writable());
  }

  get isSuspended(): boolean {
    return this.suspended;
  }

  /** Close the descriptors (and with them every lock). Only once no connection to the inode is open here. */
  close(): void {
    if (this.marker) removeMarker(this.marker);
    this.marker = undefined;
    this.gateway = false;
    this.presences.clear();
    this.refs.reader = 0;
    this.refs.writer = 0;
    this.structural = false;
    this.suspended = false;
    this.hadGateway = false;
    this.closeDescriptors();
    this.readFd = undefined;
    this.writeFd = undefined;
  }

  /**
   * The descriptor the reader presence lives on: the read-write one when this
   * process already has it (a writer: one descriptor per database, not two;
   * locks at other offsets of one open file never conflict), else read-only.
   * The file guard (F2/F3) borrows it too: open until close().
   */
  readable(): number {
    this.readFd ??= this.writeFd ?? this.open(constants.O_RDONLY);
    return this.readFd;
  }

  private closeDescriptors(): void {
    for (const fd of new Set([this.readFd, this.writeFd])) if (fd !== undefined) closeSync(fd);
  }

  /** The read-write descriptor the gate and write locks live on. */
  writable(): number {
    this.writeFd ??= this.open(constants.O_RDWR);
    return this.writeFd;
  }

  private present(role: PresenceRole, fd: number): void {
    if (this.presences.has(role)) return;
    const offset = presenceOffset({ pid: process.pid, kind: processKind(), role });
    // A byte encoding this pid can only conflict with ourselves: never fails.
    fsx.tryLock(fd, offset, 1, { shared: true });
    this.presences.set(role, { fd, offset });
  }

  private absent(role: PresenceRole): void {
    const held = this.presences.get(role);
    if (!held) return;
    fsx.unlock(held.fd, held.offset, 1);
    this.presences.delete(role);
  }

  private open(flags: number): number {
    const fd = openSync(this.path, flags | constants.O_NOFOLLOW);
    const st = fstatSync(fd);
    if (inodeKey(st) !== this.key) {
      closeSync(fd);
      throw new HearthError(
        "HEARTH_GENERATION_CHANGED",
        `${this.path} was replaced while this process held it`,
        { resource: this.path, hint: "reopen the store (or restart the process)" },
      );
    }
    return fd;
  }

  private surgeryError(waitMs: number): HearthError {
    const surgeons = safeHolders(this.path).filter((h) => h.roles.includes("surgeon"));
    const who =
      surgeons.length > 0 ? `\n${describeHolders(surgeons)}` : " (its process could not be named)";
    return new HearthError(
      "HEARTH_MAINTENANCE_RUNNING",
      `cannot write to ${this.path}: a structural operation (maintenance) has held it for more than ${waitMs} ms${who}`,
      {
        resource: this.path,
        hint: "wait for the maintenance to finish and retry; store.gateWaitMs sets how long writers wait",
        details: { holders: surgeons.map(holderJson) },
      },
    );
  }

  /** HEARTH_BUSY naming the writers and any process that is not hearth. */
  busyError(cause?: unknown): HearthError {
    // Hearth writers, and any process that is not hearth (it may hold SQLite's own lock).
    const writers = safeHolders(this.path).filter(
      (h) => h.roles.includes("writer") || h.roles.length === 0,
    );
    return new HearthError(
      "HEARTH_BUSY",
      `gave up waiting to write to ${this.path}: another writer held it past the patience (store.busyTimeoutMs); the database itself is healthy${writers.length > 0 ? `\n${describeHolders(writers)}` : ""}`,
      {
        resource: this.path,
        hint: "hearth ps   # shows who holds the store; a stopped (SIGSTOP) or stuck writer is the usual cause",
        details: { holders: writers.map(holderJson) },
        ...(cause === undefined ? {} : { cause }),
      },
    );
  }
}

function safeHolders(path: string) {
  try {
    return readHolders(path, { ghosts: false }).holders;
  } catch {
    return [];
  }
}
