import type { FastifyBaseLogger } from "fastify";
import { isSqliteStore, type Store } from "../store/api.js";

/**
 * The dashboard's long-lived read-only stores after a generation change
 * (F3, issue 41.1). When someone unlinks or replaces the `-wal`/`-shm` a
 * reader uses, its connections keep reading the removed files: a past
 * the writers have left (the commits since are missing), or, once a
 * writer checkpointed into the database, pages through a WAL index that
 * no longer describes them (`disk I/O error`, `database disk image is
 * malformed`), for every request, until a restart. The dashboard writes
 * through short-lived stores that open the current files, so no write
 * notices it for the reader. So before each API request (one fstat or
 * readlink per file, or one stat of the directory while it is quiet) and
 * after one fails, every reader whose files changed is reattached to the
 * current ones (once, however many requests see it at the same time) and
 * `store.reopened` is logged at warn; a request that failed on the removed
 * files answers 503 `HEARTH_GENERATION_CHANGED` (Retry-After: 0). A
 * parked store (a maintenance window) is left to its resume.
 */
export class ReaderReattach {
  private pending: Promise<boolean> | undefined;

  constructor(
    private readonly stores: () => Store[],
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Reattach every reader whose files were unlinked or replaced; true when one was. */
  reattach(): Promise<boolean> {
    this.pending ??= this.run().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  private async run(): Promise<boolean> {
    let reattached = false;
    for (const store of this.stores()) {
      if (!isSqliteStore(store) || store.isParked) continue;
      try {
        if (!(await store.generationChanged())) continue;
        await store.reopen();
        reattached = true;
        this.log.warn(
          { event: "store.reopened", path: store.path },
          "the store's files changed under the dashboard; reattached to the current ones",
        );
      } catch (err) {
        this.log.error(
          { event: "store.reopen_failed", path: store.path, err },
          "the store's files changed under the dashboard and it could not reattach; restart it",
        );
      }
    }
    return reattached;
  }
}
