import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { isSqliteStore, type Store } from "../store/api.js";

/** The gateway's Prometheus metrics, on their own registry (GET /metrics). */
export class GatewayMetrics {
  readonly registry = new Registry();
  readonly acknowledged = new Counter({
    name: "hearth_messages_acknowledged_total",
    help: "Messages committed and acknowledged",
    labelNames: ["profile", "role"],
    registers: [this.registry],
  });
  readonly turns = new Counter({
    name: "hearth_turns_total",
    help: "Agent turns by outcome",
    labelNames: ["profile", "outcome"],
    registers: [this.registry],
  });
  readonly errors = new Counter({
    name: "hearth_http_errors_total",
    help: "HTTP error responses by HearthError code",
    labelNames: ["code"],
    registers: [this.registry],
  });
  readonly batchSize = new Histogram({
    name: "hearth_commit_batch_size",
    help: "Messages per group-commit transaction",
    labelNames: ["profile"],
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
    registers: [this.registry],
  });
  readonly commitSeconds = new Histogram({
    name: "hearth_commit_seconds",
    help: "Duration of a group-commit transaction, lock wait included",
    labelNames: ["profile"],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [this.registry],
  });
  readonly inFlight = new Gauge({
    name: "hearth_turns_in_flight",
    help: "Agent turns running now",
    registers: [this.registry],
  });

  /** outcome "error": the server failed, timed out, died or answered isError. */
  readonly mcpCalls = new Counter({
    name: "hearth_mcp_calls_total",
    help: "Tool calls to MCP servers by outcome (ok, error)",
    labelNames: ["profile", "server", "outcome"],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: "hearth_" });
  }

  /** One MCP tool call ended. */
  mcpCall({ profile, server, ok }: { profile: string; server: string; ok: boolean }): void {
    this.mcpCalls.inc({ profile, server, outcome: ok ? "ok" : "error" });
  }

  /**
   * hearth_write_commits_total{profile,fsync}: each store's write-path
   * commits since its writer opened, by where their fsync ran ("loop",
   * inside the commit) or why it left the event loop ("busy-loop",
   * "slow-disk", "backup", "fsync-running", "group-commit": those share an fsync on the
   * libuv pool). The store's own count (`durability().offLoop.commits`),
   * read from its memory at every scrape, never counted here; PostgreSQL
   * stores have none. hearth_wal_fsyncs_total{profile}: the fsyncs those
   * commits made (store.walFsyncs()): one inside each commit on the loop,
   * one per shared fsync on the pool.
   */
  watchCommits(stores: () => Iterable<{ profile: string; store: Store }>): void {
    new Counter({
      name: "hearth_write_commits_total",
      help: "Write-path commits since the store's writer opened, by where their fsync ran (loop) or why it left the event loop",
      labelNames: ["profile", "fsync"],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const { profile, store } of stores()) {
          // A closed store (a reopen under way) is left out of this scrape.
          if (!isSqliteStore(store) || store.isClosed) continue;
          for (const [fsync, count] of Object.entries(store.offLoopCommits())) {
            if (count) this.inc({ profile, fsync }, count);
          }
        }
      },
    });
    // Group commit's efficiency, counted: fsyncs per acknowledged message (issue 44).
    new Counter({
      name: "hearth_wal_fsyncs_total",
      help: "fsyncs of the WAL for write-path commits since the store's writer opened (inside commits on the loop, and on the libuv pool)",
      labelNames: ["profile"],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const { profile, store } of stores()) {
          if (!isSqliteStore(store) || store.isClosed) continue;
          const count = store.walFsyncs();
          if (count) this.inc({ profile }, count);
        }
      },
    });
  }
}

/**
 * The Prometheus text with only `profile`'s series of the profile-labelled
 * metrics (and every series without a profile label): what a caller whose
 * token belongs to one profile may see. Profile names are [a-z0-9_-], so
 * the label never holds an escaped quote.
 */
export function onlyProfile(text: string, profile: string): string {
  return text
    .split("\n")
    .filter((line) => {
      if (line.startsWith("#")) return true;
      const label = /[{,]profile="([^"]*)"/.exec(line);
      return !label || label[1] === profile;
    })
    .join("\n");
}
