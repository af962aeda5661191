// Small store surgery for the torture run's drills on a scratch copy (never
// the live store):
//
//   node torture/scratch-tool.mjs damage-fts <state.db>   overwrite FTS index blocks
//   node torture/scratch-tool.mjs version <state.db>      print user_version
//   node torture/scratch-tool.mjs damage-index <state.db> overwrite a page of the
//       largest index in the file, one with no copy in the WAL (the live store: it reads
//       through a read-only connection, closes it, then writes the bytes); exit 2 when
//       every index page has a copy in the WAL
import { closeSync, existsSync, openSync, readFileSync, writeSync } from "node:fs";
import Database from "better-sqlite3";

const [op, path] = process.argv.slice(2);
if (op === "damage-index") {
  const ro = new Database(path, { readonly: true, fileMustExist: true });
  let leaf;
  let pageSize;
  try {
    ro.pragma("busy_timeout = 10000");
    pageSize = ro.pragma("page_size", { simple: true });
    const leaves = ro
      .prepare(
        `SELECT name, pageno, pagetype FROM dbstat WHERE name IN
          (SELECT name FROM sqlite_master WHERE type = 'index')`,
      )
      .all();
    const byIndex = new Map();
    for (const l of leaves) byIndex.set(l.name, [...(byIndex.get(l.name) ?? []), l]);
    const best = [...byIndex.values()].sort((a, b) => b.length - a.length)[0];
    // A leaf with no copy in the WAL (a checkpoint would write that copy over the
    // damage): the page numbers of the frames of the WAL's current generation,
    // those whose salts are the header's, committed or not (a superset). The
    // frames of earlier generations, left in the file after the WAL started
    // over, are never read or checkpointed again (SQLite's own rule); counted,
    // they covered every page of a young store, and the damage waited up to
    // 20 s for a WAL file cut back.
    const inWal = new Set();
    if (existsSync(`${path}-wal`)) {
      const wal = readFileSync(`${path}-wal`);
      const salts = wal.length >= 32 ? wal.subarray(16, 24) : undefined;
      for (let at = 32; salts && at + 24 <= wal.length; at += 24 + pageSize)
        if (wal.subarray(at + 8, at + 16).equals(salts)) inWal.add(wal.readUInt32BE(at));
    }
    // A leaf: an interior page (the root first, in dbstat's order) is written
    // again at the next split below it, and that newer copy in the WAL hid the
    // damage from the check that follows ("not visible": the kind did not fire).
    const free = (best ?? []).filter((l) => !inWal.has(l.pageno));
    leaf = free.find((l) => l.pagetype === "leaf") ?? free[0];
  } finally {
    ro.close();
  }
  if (!leaf) process.exit(2);
  const fd = openSync(path, "r+");
  try {
    const junk = Buffer.alloc(pageSize - 8, 0xa5);
    writeSync(fd, junk, 0, junk.length, (leaf.pageno - 1) * pageSize + 8);
  } finally {
    closeSync(fd);
  }
  process.stdout.write(`${JSON.stringify({ index: leaf.name, page: leaf.pageno })}\n`);
  process.exit(0);
}
const db = new Database(path, { fileMustExist: true });
try {
  if (op === "damage-fts") {
    db.unsafeMode(true);
    db.exec("UPDATE messages_fts_data SET block = randomblob(50) WHERE id > 10");
    try {
      db.exec("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')");
      process.exitCode = 2; // too small an index to damage this way: the drill is skipped
    } catch {
      // damaged, as wanted
    }
  } else if (op === "version") {
    process.stdout.write(String(db.pragma("user_version", { simple: true })));
  } else {
    throw new Error(`unknown op ${op}`);
  }
} finally {
  db.close();
}
