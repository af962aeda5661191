import { statSync } from "node:fs";
import type { HearthConfig } from "../../config/schema.js";
import { HearthError } from "../../errors.js";
import { failpointFails } from "../../failpoints.js";
import { inodeLocks } from "../../process/inode-locks.js";
import type { SqliteStore } from "../../store/sqlite/store.js";
import { WalSource } from "../../store/sqlite/wal-ship/source.js";
import {
  FRAME_HEADER_BYTES,
  startedOverOnce,
  type WalHeader,
  type WalPosition,
  walStart,
} from "../../store/sqlite/wal-ship/wal-file.js";
import { walLength } from "../../store/sqlite/wal-sync/wal-length.js";
import { newCounters, type ShipCounters } from "./counters.js";
import { newGeneration, segmentKey, snapshotKey } from "./layout.js";
import { RestartPacing } from "./restart-pacing.js";
import { resumable } from "./resume.js";
import { applyRetention } from "./retention.js";
import type { ReplicationStatus } from "./status.js";
import type { Staged, Target } from "./target.js";

export interface ReplicatorLog {
  info(event: object, message: string): void;
  warn(event: object, message: string): void;
}

/** A segment holds at most this many bytes of frames (a larger backlog ships in several). */
const SEGMENT_MAX_BYTES = 16 * 1024 * 1024;
/** Retention runs at most this often. */
const RETENTION_EVERY_MS = 60_000;

interface Generation {
  id: string;
  key: string;
  walSeq: number;
  /** Shipped through here in WAL walSeq (undefined: the WAL had no header yet). */
  pos: WalPosition | undefined;
  snapshotAt: number;
}

/**
 * Continuous replication of one SQLite profile to a target
 * (docs/durability.md#continuous-replication), in the process that holds
 * its writer (the gateway). Every `intervalMs` a tick ships the frames
 * committed since the last one, as one segment; the WAL hold (hold.ts)
 * keeps any checkpoint, of any process, from copying unshipped frames away,
 * and restart() lets the WAL start over once it is shipped. A break in the
 * stream (this process started, a window parked the store, the file was
 * replaced, the target failed until the WAL reached maxWalBytes) starts a
 * new generation with a snapshot.
 */
export class Replicator {
  private gen: Generation | undefined;
  private source: WalSource | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private paused = false;
  /** A maintenance window parked the store since the last generation began: the file may have been replaced, so the next generation is new. */
  private parkedSince = false;
  private lastRetention = 0;
  /** When the WAL is let start over: at a tick, or at a commit of this process that makes it long. */
  private readonly pacing: RestartPacing;
  private readonly status: ReplicationStatus;
  readonly counters: ShipCounters = newCounters();

  constructor(
    private readonly store: SqliteStore,
    private readonly target: Target,
    private readonly config: HearthConfig,
    private readonly publish: (status: ReplicationStatus) => void,
    private readonly log: ReplicatorLog,
  ) {
    this.pacing = new RestartPacing(
      store[walLength],
      config.durability.walAutocheckpointPages,
      () => {
        if (!this.stopped && !this.paused) void this.tick();
      },
    );
    this.status = {
      pid: process.pid,
      profile: store.profile,
      target: target.name,
      generation: null,
      walSeq: 0,
      shippedThrough: null,
      lagMs: null,
      intervalMs: config.replicate.intervalMs,
      lastError: null,
      abandoned: 0,
      at: Date.now(),
    };
  }

  start(): void {
    this.schedule(0);
  }

  /** The status as of the last tick. */
  get current(): ReplicationStatus {
    return this.status;
  }

  /** One tick now (tests, and before a stop): ships what is committed. */
  tick(): Promise<void> {
    this.running ??= this.run().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Stop holding the WAL (a maintenance window parks the store): ship what is committed first. */
  async pause(): Promise<void> {
    this.paused = true;
    this.parkedSince = true;
    await this.running;
    if (this.gen) await this.ship().catch(() => {});
    this.endGeneration();
  }

  resume(): void {
    this.paused = false;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    if (this.gen) await this.ship().catch(() => {});
    this.endGeneration();
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.tick().finally(() => this.schedule(this.config.replicate.intervalMs));
    }, ms);
    this.timer.unref();
  }

  private async run(): Promise<void> {
    if (this.stopped || this.paused || this.store.isClosed || this.store.isParked) {
      if (this.store.isParked) this.parkedSince = true;
      this.endGeneration();
      return;
    }
    const started = Date.now();
    try {
      if (this.gen && this.source!.key() !== this.gen.key) this.endGeneration();
      if (!this.gen) await this.startGeneration();
      else await this.ship();
      this.status.shippedThrough = started;
      const gen = this.gen!;
      if (Date.now() - gen.snapshotAt >= this.config.replicate.snapshotIntervalMs)
        await this.snapshot(gen);
      this.pacing.after(gen.walSeq, gen.pos?.frame, await this.maybeRestart(gen));
      this.status.lastError = null;
      if (Date.now() - this.lastRetention >= RETENTION_EVERY_MS) {
        this.lastRetention = Date.now();
        await applyRetention(this.target, this.store.profile, gen.id, this.config.replicate);
      }
    } catch (err) {
      this.failed(err);
    }
    this.status.at = Date.now();
    this.status.lagMs =
      this.status.shippedThrough === null ? null : this.status.at - this.status.shippedThrough;
    this.status.generation = this.gen?.id ?? null;
    this.status.walSeq = this.gen?.walSeq ?? 0;
    try {
      this.publish(this.status);
    } catch {
      // The status is for watchers; replication goes on without it.
    }
  }

  private failed(err: unknown): void {
    const e = err as HearthError;
    const first = this.status.lastError === null;
    this.status.lastError = {
      code: e.code ?? "HEARTH_TARGET_FAILED",
      message: e.message,
      since: this.status.lastError?.since ?? Date.now(),
    };
    if (first)
      this.log.warn(
        { event: "replicate.failed", profile: this.store.profile, target: this.target.name, err },
        "replication is behind; the WAL is kept until the target takes it",
      );
    // Not holding the WAL (a failed start) or the WAL too long to keep: give the generation up.
    if (this.gen && (!this.source?.hold.holding || this.walTooLong())) {
      this.status.abandoned++;
      this.log.warn(
        { event: "replicate.abandoned", profile: this.store.profile, generation: this.gen.id },
        "gave up the generation (the writer is not held up); a new one starts with a snapshot once the target answers",
      );
      this.endGeneration();
    }
  }

  private walTooLong(): boolean {
    const size = this.source ? fileSize(`${this.store.path}-wal`) : 0;
    return size > this.config.replicate.maxWalBytes;
  }

  private endGeneration(): void {
    this.pacing.reset();
    this.gen = undefined;
    this.source?.close();
    this.source = undefined;
  }

  private async startGeneration(): Promise<void> {
    const { durability, store } = this.config;
    this.source ??= new WalSource({
      path: this.store.path,
      writeLock: this.store[inodeLocks].writeLock,
      synchronous: durability.synchronous,
      truncateAbove: durability.journalSizeLimitBytes,
      patienceMs: store.busyTimeoutMs,
    });
    const source = this.source;
    source.hold.begin();
    try {
      if (!this.parkedSince && (await this.continueGeneration())) return;
      const header = await source.header();
      const gen: Generation = {
        id: newGeneration(),
        key: source.key(),
        walSeq: 0,
        pos: header ? walStart(header) : undefined,
        snapshotAt: 0,
      };
      // Read first, put after the frames: its time is then past every frame whose pages it may hold.
      const staged = await this.target.stage(this.store.path);
      try {
        if (header) await this.shipFrames(gen, header);
      } catch (err) {
        await staged.discard().catch(() => {});
        throw err;
      }
      await this.putSnapshot(gen, staged);
      this.gen = gen;
      this.parkedSince = false;
      this.counters.started++;
      this.log.info(
        { event: "replicate.generation", profile: this.store.profile, generation: gen.id },
        `replicating to ${this.target.name} (${this.target.where}), generation ${gen.id}`,
      );
    } catch (err) {
      this.endGeneration();
      throw err;
    }
  }

  /**
   * Continue the target's newest generation when the WAL, read under the
   * hold begun, still continues it (resume.ts): ship the frames past its
   * last segment, then check that the WAL did not start over while they
   * were read (the hold begun here may be one that does not keep it from
   * starting over: a reader of a WAL copied whole reads the database file
   * only). False, having changed nothing the restore depends on, when it
   * cannot tell: a new generation starts.
   */
  private async continueGeneration(): Promise<boolean> {
    const source = this.source!;
    const header = await source.header();
    if (!header) return false;
    const found = await resumable(this.target, this.store.profile, source, header);
    if (!found) return false;
    const gen: Generation = {
      id: found.id,
      key: source.key(),
      walSeq: found.walSeq,
      pos: found.pos,
      snapshotAt: found.snapshotAt,
    };
    await this.shipFrames(gen, header);
    const after = await source.header();
    if (!after || after.salt1 !== header.salt1 || after.salt2 !== header.salt2) return false;
    this.gen = gen;
    this.counters.resumed++;
    this.log.info(
      { event: "replicate.resumed", profile: this.store.profile, generation: gen.id },
      `replicating to ${this.target.name} (${this.target.where}), continuing generation ${gen.id} at WAL ${gen.walSeq} frame ${found.pos.frame}`,
    );
    return true;
  }

  /**
   * The database file, read under the hold: it holds no page of a frame
   * not yet shipped (a checkpoint copies none past the hold). A restore
   * applies every frame of its walSeq to it, which mends a page a
   * checkpoint was writing while it was read.
   */
  private async snapshot(gen: Generation): Promise<void> {
    await this.putSnapshot(gen, await this.target.stage(this.store.path));
  }

  /** A snapshot staged (streamed and hashed, never whole in memory: Target.stage) put in place. */
  private async putSnapshot(gen: Generation, staged: Staged): Promise<void> {
    const at = Date.now();
    const item = { generation: gen.id, walSeq: gen.walSeq, frame: gen.pos?.frame ?? 0, at };
    await staged.publish(snapshotKey(this.store.profile, { ...item, sha: staged.sha }));
    gen.snapshotAt = at;
    this.counters.snapshots++;
    this.counters.snapshotBytes += staged.bytes;
  }

  /** A new hold, every committed frame shipped, then the older hold let go (hold.ts). */
  private async ship(): Promise<void> {
    const gen = this.gen!;
    const source = this.source!;
    source.hold.begin();
    try {
      const header = await source.header();
      if (header) await this.shipFrames(gen, header);
    } catch (err) {
      source.hold.releaseNewest();
      throw err;
    }
    source.hold.releaseOlder();
  }

  private async shipFrames(gen: Generation, header: WalHeader): Promise<void> {
    if (!gen.pos || header.salt1 !== gen.pos.salt1 || header.salt2 !== gen.pos.salt2) {
      // The WAL started over. The hold let that happen only with every frame
      // of the old one shipped; once exactly, or the stream is broken. The
      // header's checkpoint sequence cannot tell (the checkpoint thread's
      // fresh connection wrote 1 after 11, and the stream was abandoned
      // for nothing): salt-1 can.
      if (gen.pos && !startedOverOnce(gen.pos, header))
        throw new HearthError(
          "HEARTH_REPLICA_GAP",
          `the WAL of ${this.store.path} started over more than once between two reads`,
          { resource: this.store.path, hint: "a new generation starts with a snapshot" },
        );
      if (gen.pos) gen.walSeq++;
      gen.pos = walStart(header);
    }
    for (;;) {
      const packed = await this.source!.pack(header, gen.pos, SEGMENT_MAX_BYTES);
      if (packed.frames === 0) return;
      const seg = {
        generation: gen.id,
        walSeq: gen.walSeq,
        from: gen.pos.frame,
        to: packed.to.frame,
        at: Date.now(),
        sha: packed.sha,
        packed: true,
      };
      const key = segmentKey(this.store.profile, seg);
      await this.target.put(key, packed.data);
      if (failpointFails("replicate.after-put"))
        throw new HearthError(
          "HEARTH_TARGET_FAILED",
          `backup target ${this.target.name} took ${key} but its answer was lost`,
          { resource: this.target.where },
        );
      gen.pos = packed.to;
      const c = this.counters;
      c.segments++;
      c.frames += packed.frames;
      c.walBytes += packed.walBytes;
      c.kept += packed.kept;
      c.bytes += packed.data.length;
      if (packed.walBytes + header.pageSize + FRAME_HEADER_BYTES <= SEGMENT_MAX_BYTES) return;
    }
  }

  /** Let the WAL start over when it is long (RestartPacing); true when the copy was whole (it starts over at the next commit). */
  private async maybeRestart(gen: Generation): Promise<boolean> {
    if (!this.pacing.due(gen.pos?.frame)) return false;
    const source = this.source!;
    let locked = 0;
    const whole = await source.restart(async () => {
      locked = Date.now();
      const header = await source.header();
      if (header) await this.shipFrames(gen, header);
    });
    if (locked) {
      this.counters.restarts++;
      this.counters.restartLockedMs += Date.now() - locked;
    }
    return whole;
  }
}

function fileSize(path: string): number {
  return statSync(path, { throwIfNoEntry: false })?.size ?? 0;
}
