import type { Migration } from "./migrations.js";

/**
 * Migrations 14 and later: the graph checkpoint tables (LangGraph's
 * persistence, src/store/sqlite/graph-checkpoints.ts). Listed after the
 * access migrations in MIGRATIONS; the same rules hold (never edit a shipped
 * one, add the next). Each runs inside the one migration transaction
 * (migrate.ts): a crash part-way leaves the store at the version before.
 */
export const GRAPH_MIGRATIONS: readonly Migration[] = [
  {
    version: 14,
    description: "graph channel values in a rowid table, found by small index entries",
    sql: `
-- graph_blobs was WITHOUT ROWID: its primary-key b-tree held each value in
-- its cells, and a search of an index b-tree whose cells spill to overflow
-- pages reads each cell it compares whole (a conversation's messages
-- channel: tens of KB per cell), so every put's upsert and every lookup by
-- key read values it did not want. As a rowid table, searches run on the
-- small entries of graph_blobs_by_key and a value is read only when asked
-- for. graph_blobs_by_version leads with the version: the values a
-- checkpoint writes share it, so a put changes one leaf of that index, not
-- one per channel. The rows are copied as they are (same columns).
CREATE TABLE graph_blobs_rowid (
  thread_id     TEXT NOT NULL,
  checkpoint_ns TEXT NOT NULL DEFAULT '',
  checkpoint_id TEXT NOT NULL,
  channel       TEXT NOT NULL,
  version       TEXT NOT NULL,
  type          TEXT NOT NULL,
  value         BLOB
) STRICT;
INSERT INTO graph_blobs_rowid (thread_id, checkpoint_ns, checkpoint_id, channel, version, type, value)
  SELECT thread_id, checkpoint_ns, checkpoint_id, channel, version, type, value FROM graph_blobs
  ORDER BY thread_id, checkpoint_ns, checkpoint_id, channel;
DROP TABLE graph_blobs;
ALTER TABLE graph_blobs_rowid RENAME TO graph_blobs;
CREATE UNIQUE INDEX graph_blobs_by_key ON graph_blobs (thread_id, checkpoint_ns, checkpoint_id, channel);
CREATE INDEX graph_blobs_by_version
  ON graph_blobs (thread_id, checkpoint_ns, version, channel, checkpoint_id);
`,
  },
];
