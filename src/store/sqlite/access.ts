import type { Connection } from "./connection.js";

/** What the store's parts need: a connection for reads, one for writes, a clock. */
export interface Access {
  readonly profile: string;
  readonly path: string;
  /** The read-only connection (C1): reads never run on the writer. */
  read(): Connection;
  /** The shared writer connection; throws HEARTH_READ_ONLY for reader stores. */
  write(): Connection;
  /**
   * The store's write path: run `fn` in one IMMEDIATE transaction on the
   * writer connection it is given (the one current at that instant, so a
   * reopen() in between never hands it a closed one), after waiting (never
   * blocking the event loop) for this process's turn at the fair write lock.
   * An aborted `signal` ends the wait with HEARTH_ABORTED; nothing is written.
   */
  writeTransaction<T>(fn: (conn: Connection) => T, signal?: AbortSignal): Promise<T>;
  now(): number;
}
