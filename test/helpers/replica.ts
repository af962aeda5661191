import Database from "better-sqlite3";
import { type Replication, startReplication } from "../../src/ops/replicate/run.js";
import type { Store } from "../../src/store/api.js";

export const quiet = { info: () => {}, warn: () => {} };

/** Every message row, in order: what a restore must reproduce exactly. */
export function rows(path: string): unknown[] {
  const db = new Database(path, { readonly: true });
  try {
    return db
      .prepare("SELECT session_id, ordinal, client_id, role, content FROM messages ORDER BY id")
      .all();
  } finally {
    db.close();
  }
}

export function replicaConfig(dir: string, extra: Record<string, unknown> = {}) {
  return {
    backup: { targets: [{ name: "offsite", type: "dir" as const, path: dir }] },
    // A long interval: the test ships with tick(), so each commit's position is known.
    replicate: { target: "offsite", intervalMs: 60_000, snapshotIntervalMs: 1_000, ...extra },
    // Small checkpoint thresholds: the WAL starts over many times during the run.
    durability: { walAutocheckpointPages: 16 },
  };
}

/** `backup.targets` of one S3 target "offsite" on an s3rver (or a proxy to it) at `port`. */
export function s3Targets(port: number) {
  return {
    targets: [
      {
        name: "offsite",
        type: "s3" as const,
        bucket: "hearth",
        prefix: "replicas",
        endpoint: `http://127.0.0.1:${port}`,
        forcePathStyle: true,
      },
    ],
  };
}

/** Replicate `store` in this process, as the gateway does (ticks on a long interval unless told). */
export function replicating(store: Store, home: string): Promise<Replication> {
  return startReplication({ config: store.config, home, stores: [store], log: quiet });
}
