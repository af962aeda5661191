/** The @internal getter of a SqliteStore that gives its database's WalLength. */
export const walLength = Symbol("hearth.walLength");

/**
 * A one-shot watch on the WAL's length, fed by this process's commits: the
 * WalSync reads the wal-index header after every commit it makes
 * (sync.ts), and the first commit that leaves the WAL `frames` frames
 * long or longer calls `wake`, once. Continuous replication arms it
 * (src/ops/replicate/replicator.ts): a WAL its hold keeps from starting
 * over is shipped and started over once it is that long, not only at the
 * next tick. On a clock alone, a writer of ~2,000 appends a second grew
 * the WAL ~24,000 frames between ticks, and a commit that extends the
 * file costs its writer more than one that overwrites it (issue 44).
 *
 * Commits of other processes, and of a store without a WalSync, are not
 * seen: their WAL waits for the tick, as before.
 */
export class WalLength {
  private armed: { frames: number; wake: () => void } | undefined;

  /** Call `wake` once, at the first commit after which the WAL holds `frames` frames or more. Replaces an earlier watch. */
  watch(frames: number, wake: () => void): void {
    this.armed = { frames, wake };
  }

  /** Forget the watch (its owner stopped). */
  unwatch(wake: () => void): void {
    if (this.armed?.wake === wake) this.armed = undefined;
  }

  /** The length the watch waits for (undefined: none). */
  get threshold(): number | undefined {
    return this.armed?.frames;
  }

  /** After a commit, with the WAL's length the wal-index header gives. */
  committed(frames: number): void {
    const armed = this.armed;
    if (!armed || frames < armed.frames) return;
    this.armed = undefined;
    armed.wake();
  }
}
