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
- **group commit's fsyncs.** The turn leases (\`casOn\` 1.8 %) were
  taken here for write transactions of their own; counted since, they
  are not (on a turn's usual path they ride in the savepoints of its
  messages, as the ceiling's do; see below), and the extra fsyncs are a
  new chat's own transactions (session, title). The gateway's counted
  \`hearth_wal_fsyncs_total\` gave 0.19 fsyncs per acknowledged message at
  64 clients (test/integration/gateway/group-commit.test.ts, 704 turns in
  109 group commits), where the ceiling, whose lease row is written in the
  same savepoints as the messages, makes one per commit (1/13 here). The
  workload's row "WAL fsyncs per acknowledged message" (target ≤ 1/20)
  now reports it.

Fixed with the profile: the fsync policy's check for other work on the
loop (issue 44) asked \`process._getActiveHandles()\` at every window
(0.7 % of the samples with 64 sockets); it now stops at the first
resource that is not stdio, which in a gateway is its server.

Fixed after it (docs/benchmarks-history.md, "A turn's own reads and
listeners"): the session a turn answers with comes from the reply's
commit (its \`UPDATE sessions … RETURNING *\`), not from a read after it,
so a turn on a known chat runs one statement on the read-only connection
(the chat lookup; test/integration/gateway/turn-statements.test.ts counts
it); the per-request \`AbortController\` is a \`TurnStop\` (src/turn/stop.ts,
a flag and listeners kept only while a turn waits); and the turns in
flight share one listener on the draining signal instead of adding and
removing one each. The leases were already in the group commit on a
turn's usual path (taken in the savepoint of the inbound message,
released in the reply's; the same test counts every write transaction of
a steady-state turn as a group commit): the write transactions outside
it are a new chat's (its session, then its automatic title and
\`titledBy\`), three per chat, one chat per 25 turns in this workload.

Fixed next (docs/benchmarks-history.md, "The chat lookup, remembered"):
the chat lookup. The gateway remembers each chat's session and checks it
inside the append's own savepoint (\`AppendItem.openChat\`: the same
indexed lookup on the writer's warm pages), so a turn on a known chat
reads no statement on the read-only connection (turn-statements.test.ts:
0 for 16 turns); the host guard, auth, profile-scope and \`onSend\` hooks
are callback hooks (no promise per hook per request).

### Steady state, by thread (perf, 2026-12-05)

The profiles above were taken 0.3–0.5 s after the load started. For the
next 10–15 s V8 is still optimizing (TurboFan on its helper threads), and
more so for hearth's code than for the ceiling's small script: per 3 s
interval of one 30 s run at 8 clients, the helper threads used 3–22 % of
the main thread's CPU in the first 15 s and 0–4 % after it, for hearth and
for the ceiling alike. With 500 ms of warm-up that compilation is counted
as per-turn cost (at 8 clients, 180–250 µs per turn in hearth's helper
threads against 80–110 in the ceiling's). \`node bench/cpu-per-turn.mjs
CLIENTS 5000 KIND 15000\` measures after it. \`node bench/perf-gateway.mjs
KIND 64 6000 15000\` records the gateway with Linux perf (on-CPU samples at
1999 Hz, node --perf-basic-prof; --cpu-prof's samples are wall-clock and
count a blocked fsync) for 5.5 s after 15 s of load, by thread and kind of
code, in µs of CPU per turn (one run each, load 12–16):

| 64 clients, where | hearth | ceiling |
|---|---:|---:|
| main thread: SQLite (C) | 76 | 87 |
| main thread: kernel (socket writes, the ceiling's fsyncs) | 81 | 96 |
| main thread: V8 builtins (ICs, async function resumption) and runtime | 103 | 74 |
| main thread: libc (malloc, memcpy) | 28 | 28 |
| main thread: JavaScript (own or the script, node's, fastify, pino, prom-client) | 31 | 15 |
| main thread: GC | 4 | 2 |
| main thread, all | 323 | 304 |
| other threads: kernel (the pool's fsyncs, the checkpoint thread's writes) | 41 | 1 |
| other threads: SQLite (checkpoints, search-index merges) | 8 | 0 |
| other threads: V8 compiler and GC | 10 | 3 |
| other threads, all | 67 | 4 |

At 8 clients (same method): main thread 586 against 574, other threads
134 against 21. fastify and pino together are 5–7 µs of JavaScript per
turn in hearth against 4–12 in the ceiling: the framework is not the
floor, and there is no schema, serializer or logger choice left to make
on the hot path. What remains is the store's commit path beside the loop:
fsyncs on the libuv pool instead of inline (their kernel time and the
thread hand-offs), checkpoints and search-index merges on the checkpoint
thread where the ceiling runs SQLite's automatic ones inside its commits,
and the write path's per-transaction work (the fair write lock, the
generation check); at 8 clients a commit carries ~5 messages, so that
per-commit cost weighs more than at 64 (~40).

Measured (\`bench/cpu-per-turn.mjs\`, rotated base / this / ceiling, base
= main at 30bd0e1 through \`HEARTH_BENCH_CLI\`, medians, partial run, load
11.6–16.9):

| clients, warm-up | base ms/turn | this ms/turn | ceiling ms/turn | base / ceiling | this / ceiling |
|---|---:|---:|---:|---:|---:|
| 8, 15 s (6 rounds) | 0.635 | 0.586 | 0.428 | 1.48× | 1.37× |
| 64, 15 s (6 rounds) | 0.342 | 0.322 | 0.270 | 1.27× | 1.19× |
| 8, 0.5 s (3 rounds) | 1.128 | 1.001 | 0.634 | 1.78× | 1.58× |
| 64, 0.5 s (3 rounds) | 0.607 | 0.577 | 0.354 | 1.71× | 1.63× |

The target (≤ 1.25×) is met at 64 clients in the steady state, not at 8.

`;
}
