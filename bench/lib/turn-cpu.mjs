// A fixed section of docs/benchmarks.md: where a gateway turn's CPU goes,
// from CPU profiles (bench/profile-gateway.mjs), not from a bench run.
// Rewritten by hand when the profiles are taken again.

export function turnCpuSection() {
  return `## Where a turn's CPU goes (workload 3, profiled)

\`node bench/profile-gateway.mjs DIR 64 5000\` (and \`PROFILE=ceiling\` for the
fair ceiling, bench/workers/gateway-sql-ceiling.mjs: fastify and raw
better-sqlite3 doing a turn's SQL in the same group commits) profiles the
gateway process under 64 clients at WAL+FULL for 5 s. Taken on
2026-12-05 on the 2-CPU bench machine at a load average of 24–29 (other
sessions' work), so rates are low; the CPU per turn and the shares are
what carries over: hearth 0.767 ms per turn at 511 msg/s, the ceiling
0.482 ms at 465 msg/s (1.59×; the target is ≤ 1.25×). Each category's
share of the samples (idle left out), applied to the CPU per turn:

| where | hearth µs/turn | ceiling µs/turn |
|---|---:|---:|
| SQLite and the server's own code (hearth's store, turn and routes; the ceiling's SQL and better-sqlite3's wrapper) | 349 | 322 |
| node's other work: socket writes (writev 7.1 % against 6.6 %), process.nextTick and promise jobs, the fs bindings | 170 | 54 |
| node's HTTP, streams and events | 128 | 63 |
| fastify, find-my-way and pino | 52 | 24 |
| garbage collection | 36 | 16 |
| native, unattributed | 25 | 3 |
| other dependencies | 7 | 3 |

So the framework itself (fastify's routing, validation, serializer and
pino's per-request child logger) is 52 µs against 24: not the floor, and
not the largest part of the gap. The gap is around it:

- **node's HTTP and events, +65 µs.** An \`AbortController\` per request
  (the turn stops when the client goes away or the gateway drains;
  \`createAbortSignal\`, its listeners: 3.8 % of the samples, ~29 µs),
  \`emit\` and listener churn on the response's \`close\`.
- **ticks and promise jobs, +116 µs in "node's other work".**
  \`process.nextTick\` 2.5 %, \`processPromiseRejections\` 0.7 %, the
  \`fsync\` binding on the loop's thread 3.2 % (not yet explained: the
  commits' fsyncs of a busy gateway are queued to the pool), the
  backup-flag probe's \`open\` once per 100 ms (1.7 % on a disk this
  loaded).
- **the store's reads in a turn.** \`resolveChat\` (finding the chat's
  session) 9.4 % of the samples, ~72 µs, and \`sessions.get\` 5.7 %,
  ~44 µs, where the ceiling's one indexed SELECT of the session does both;
  \`insertMessage\` 8.5 %, the commit 6.6 %.
- **group commit's fsyncs.** The turn leases (\`meta.compareAndSet\`,
  taken and released once per turn, \`casOn\` 1.8 %) are write
  transactions of their own, outside the group commit, each with its own
  WAL fsync (shared on the pool while one runs): the gateway's counted
  \`hearth_wal_fsyncs_total\` gave 0.19 fsyncs per acknowledged message at
  64 clients (test/integration/gateway/group-commit.test.ts, 704 turns in
  109 group commits), where the ceiling, whose lease row is written in the
  same savepoints as the messages, makes one per commit (1/13 here). The
  workload's row "WAL fsyncs per acknowledged message" (target ≤ 1/20)
  now reports it.

Fixed with the profile: the fsync policy's check for other work on the
loop (issue 44) asked \`process._getActiveHandles()\` at every window
(0.7 % of the samples with 64 sockets); it now stops at the first
resource that is not stdio, which in a gateway is its server. Not fixed
yet, each with its figure above: the per-request \`AbortController\`
(created only when a turn can be stopped), the chat lookup, and the
leases in the group commit.

`;
}
