import type { WalLength } from "../../store/sqlite/wal-sync/wal-length.js";

/**
 * The WAL is let start over (Replicator's restart) once this many
 * checkpoint thresholds long: at a tick, and as soon as a commit of this
 * process leaves it that long (WalLength), without waiting for the tick.
 */
const RESTART_THRESHOLDS = 2;

/**
 * When the replicator's next restart of the WAL comes: at the tick that
 * finds the WAL RESTART_THRESHOLDS long, and at the first commit of this
 * process that makes it so (a tick then, off the commit's path). On a
 * clock alone, a writer of ~2,000 appends a second grew the WAL ~24,000
 * frames between ticks, and a commit that extends the WAL file costs its
 * writer more than one that overwrites it (issue 44).
 */
export class RestartPacing {
  /** The WAL's walSeq at the last restart that copied it whole (it starts over at the next commit, unless a reader holds it). */
  private restartedIn: number | undefined;
  private readonly wake = (): void => {
    setImmediate(this.tick);
  };

  constructor(
    private readonly length: WalLength,
    /** durability.walAutocheckpointPages. */
    private readonly pages: number,
    private readonly tick: () => void,
  ) {}

  /** A WAL shipped through `frame` is long enough to start over. */
  due(frame: number | undefined): boolean {
    return frame !== undefined && frame >= RESTART_THRESHOLDS * this.pages;
  }

  /**
   * After a tick (`whole`: its restart copied the WAL whole): the next one
   * comes as soon as this process's commits make the WAL RESTART_THRESHOLDS
   * long, where a whole copy lets it start over from nothing at the next
   * commit. When it did not start over after the last whole copy (a reader
   * of the WAL kept it), or the copy was not whole, the next tick comes a
   * threshold past what is shipped: one restart tried per threshold of
   * frames, not per commit.
   */
  after(walSeq: number, shippedFrame: number | undefined, whole: boolean): void {
    const floor = RESTART_THRESHOLDS * this.pages;
    const fresh = whole && this.restartedIn !== walSeq;
    if (whole) this.restartedIn = walSeq;
    const frames =
      fresh || shippedFrame === undefined ? floor : Math.max(floor, shippedFrame + this.pages);
    this.length.watch(frames, this.wake);
  }

  /** The generation ended: no wake, and the next one starts afresh. */
  reset(): void {
    this.length.unwatch(this.wake);
    this.restartedIn = undefined;
  }
}
