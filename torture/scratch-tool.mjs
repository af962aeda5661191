// Small store surgery for the torture run's drills on a scratch copy (never
// the live store):
//
//   node torture/scratch-tool.mjs damage-fts <state.db>   overwrite FTS index blocks
//   node torture/scratch-tool.mjs version <state.db>      print user_version
import Database from "better-sqlite3";

const [op, path] = process.argv.slice(2);
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
