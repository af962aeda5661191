// Preloaded into the gateway of workload 18 (node --import): counts the
// queries the process sends to PostgreSQL, client side. node-postgres sends
// one query at a time on a connection and waits for its ReadyForQuery, so
// every Client#query call (pool.query calls it once) is one round trip.
// SIGUSR2 prints {"event":"bench.pgq","queries":n} on stdout. Adds nothing
// else to the process. $HEARTH_BENCH_PG_FROM (a directory, e.g. another
// build's dist/): count the pg module that code resolves, not this tree's.
import { createRequire } from "node:module";

const from = process.env.HEARTH_BENCH_PG_FROM;
const { default: pg } = await import(from ? createRequire(`${from}/`).resolve("pg") : "pg");

let queries = 0;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function counted(...args) {
  queries++;
  return query.apply(this, args);
};
process.on("SIGUSR2", () => {
  process.stdout.write(`${JSON.stringify({ event: "bench.pgq", queries, at: Date.now() })}\n`);
});
