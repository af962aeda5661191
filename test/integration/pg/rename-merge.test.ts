/**
 * rename() with metadata on PostgreSQL reads the metadata, merges, and
 * writes it with an UPDATE that requires the metadata unchanged. A change
 * another connection commits between the read and that UPDATE must make it
 * read and merge again: the other writer's value stays (never a stale copy
 * written over it). The change is made at exactly that point: the store's
 * read is followed, before its UPDATE is sent, by a write on a connection
 * of the test's own.
 */
import pg from "pg";
import { afterEach, expect, it } from "vitest";
import { openStore, type Store } from "../../../src/index.js";
import { tempHome } from "../../helpers/home.js";
import { freshPgDatabase, pgEnabled } from "../../helpers/pg.js";

const query = pg.Client.prototype.query;
const stores: Store[] = [];
const clients: pg.Client[] = [];
afterEach(async () => {
  pg.Client.prototype.query = query;
  for (const s of stores.splice(0)) await s.close();
  for (const c of clients.splice(0)) await c.end();
});

it.runIf(pgEnabled)(
  "a metadata change committed between the read and the write is merged, never overwritten",
  async () => {
    const url = await freshPgDatabase();
    const store = await openStore({ home: tempHome(), url, env: {} });
    stores.push(store);
    const other = new pg.Client({ connectionString: url });
    clients.push(other);
    await other.connect();
    const s = await store.sessions.create({ metadata: { first: 1 } });
    let reads = 0;
    let raced = 0;
    // The pool calls query(text, values, callback): the change runs before the callback.
    const change = () =>
      (query as (t: string, v: unknown[]) => Promise<unknown>).call(
        other,
        "UPDATE sessions SET metadata = $1 WHERE id = $2",
        ['{"first":1,"theirs":2}', s.id],
      );
    pg.Client.prototype.query = function racing(this: pg.Client, ...args: unknown[]) {
      const q = args[0];
      const text = typeof q === "string" ? q : ((q as { text?: string })?.text ?? "");
      const done = args.at(-1);
      const read = this !== other && text.startsWith("SELECT title_source, metadata FROM sessions");
      if (read) reads++;
      // The first read only: its UPDATE then finds the metadata changed.
      if (read && reads === 1 && typeof done === "function") {
        args[args.length - 1] = (err: unknown, result: unknown) => {
          if (err) return done(err, result);
          change().then(
            () => {
              raced++;
              done(null, result);
            },
            (e: unknown) => done(e),
          );
        };
      }
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
    const renamed = await store.sessions.rename(s.id, "Merged", "auto", {
      metadata: { titledBy: "model" },
    });
    pg.Client.prototype.query = query;
    expect(raced).toBe(1);
    expect(reads).toBe(2);
    expect(renamed).toMatchObject({ title: "Merged", titleSource: "auto" });
    expect(renamed.metadata).toEqual({ first: 1, theirs: 2, titledBy: "model" });
    expect((await store.sessions.require(s.id)).metadata).toEqual(renamed.metadata);
  },
);
