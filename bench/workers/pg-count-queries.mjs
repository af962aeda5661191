// Preloaded into the gateway of workload 18 (node --import): counts the
// queries the process sends to PostgreSQL, client side. node-postgres sends
// one query at a time on a connection and waits for its ReadyForQuery, so
// every Client#query call (pool.query calls it once) is one round trip.
// SIGUSR2 prints {"event":"bench.pgq","queries":n} on stdout. Adds nothing
// else to the process.
import pg from "pg";

let queries = 0;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function counted(...args) {
  queries++;
  return query.apply(this, args);
};
process.on("SIGUSR2", () => {
  process.stdout.write(`${JSON.stringify({ event: "bench.pgq", queries, at: Date.now() })}\n`);
});
