import { Gauge, type Registry } from "prom-client";
import { lagAt, type ReplicationStatus } from "../ops/replicate/status.js";

/**
 * hearth_replication_lag_seconds{profile,target}: how long ago the newest
 * write known to be on the target was committed at the latest (about
 * replicate.intervalMs when healthy; it grows while the target fails).
 * hearth_replication_failing{profile,target}: 1 while ticks fail.
 * hearth_replication_abandoned_total: generations given up (docs/operations.md).
 */
export function watchReplication(registry: Registry, statuses: () => ReplicationStatus[]): void {
  const labelNames = ["profile", "target"];
  new Gauge({
    name: "hearth_replication_lag_seconds",
    help: "Seconds since the newest write known shipped to the backup target was committed, at the latest",
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      for (const s of statuses()) {
        const lag = lagAt(s);
        if (lag !== null) this.set({ profile: s.profile, target: s.target }, lag / 1000);
      }
    },
  });
  new Gauge({
    name: "hearth_replication_failing",
    help: "1 while replication to the backup target fails (lag grows), else 0",
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      for (const s of statuses())
        this.set({ profile: s.profile, target: s.target }, s.lastError ? 1 : 0);
    },
  });
  new Gauge({
    name: "hearth_replication_abandoned_total",
    help: "Replica generations given up since start because the target failed until the WAL reached replicate.maxWalBytes",
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      for (const s of statuses()) this.set({ profile: s.profile, target: s.target }, s.abandoned);
    },
  });
}
