// The mechanism of the torture run's silent loss (issue 41.5), in raw
// SQLite (better-sqlite3), no hearth code: `node torture/shared-index-repro.mjs`.
//
// SQLite's unix VFS keeps one wal-index (-shm mapping) per database inode
// per process. After -wal and -shm are unlinked:
// - process B (the dashboard) opens the database: it creates the new -wal
//   and -shm, is their first user (recovery), and keeps them live;
// - process A (the gateway) checkpoints the removed WAL (the ghost save),
//   closes its writer and opens a new one while another connection of A is
//   still on the removed files: the new writer takes the removed -shm as
//   its index and appends to the new -wal behind it;
// - B does not see A's commits; A is killed -9; the next writer finds the
//   new -shm live (B holds it: no recovery), starts the WAL over and writes
//   over A's frames. integrity_check stays ok.
// With `closefirst`, A closes its old connection before the new writer's
// first read: nothing is lost. Prints both outcomes.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";

const [mode, path, variant] = process.argv.slice(2);

function lines(child) {
  let buf = "";
  const queue = [];
  let wake;
  child.stdout.on("data", (chunk) => {
    buf += chunk;
    for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
      queue.push(buf.slice(0, i));
      buf = buf.slice(i + 1);
      wake?.();
    }
  });
  child.stderr.pipe(process.stderr);
  return async () => {
    while (!queue.length)
      await new Promise((resolve) => {
        wake = resolve;
      });
    return queue.shift();
  };
}

const say = (line) => process.stdout.write(`${line}\n`);
const count = (db) => db.prepare("SELECT count(*) AS n FROM t").get().n;
const shmMaps = () =>
  readFileSync("/proc/self/maps", "utf8")
    .split("\n")
    .filter((l) => l.includes("-shm"))
    .map((l) => l.split(/\s+/).slice(5).join(" "));

if (mode === "reader") {
  const db = new Database(path);
  say(String(count(db)));
  process.stdin.on("data", () => say(String(count(db))));
} else if (mode === "writer") {
  const w1 = new Database(path);
  w1.pragma("wal_autocheckpoint = 0");
  const old = new Database(path, { readonly: true }); // "a reader thread"
  old.prepare("SELECT count(*) FROM t").get();
  for (let i = 0; i < 10; i++) w1.prepare("INSERT INTO t VALUES (?)").run(i);
  say("ready");
  process.stdin.once("data", () => {
    const [row] = w1.pragma("wal_checkpoint(PASSIVE)"); // the ghost save
    w1.close();
    say(`saved ${row.checkpointed}/${row.log}`);
    process.stdin.once("data", () => {
      const w2 = new Database(path);
      w2.pragma("wal_autocheckpoint = 0");
      if (variant === "closefirst") old.close();
      for (let i = 0; i < 100; i++) w2.prepare("INSERT INTO t VALUES (?)").run(1000 + i);
      say(`acknowledged 100 (it sees ${count(w2)}; maps ${JSON.stringify(shmMaps())})`);
    });
  });
} else {
  for (const variant of ["", "closefirst"]) {
    const dir = mkdtempSync(join(tmpdir(), "shared-index-"));
    const db = join(dir, "state.db");
    const setup = new Database(db);
    setup.pragma("journal_mode = WAL");
    setup.exec("CREATE TABLE t (x)");
    setup.close();
    const self = new URL(import.meta.url).pathname;
    const a = spawn(process.execPath, [self, "writer", db, variant]);
    const fromA = lines(a);
    await fromA();
    unlinkSync(`${db}-wal`);
    unlinkSync(`${db}-shm`);
    a.stdin.write("save\n");
    say(`A: ${await fromA()}`);
    const b = spawn(process.execPath, [self, "reader", db]);
    const fromB = lines(b);
    say(`B reattached, sees ${await fromB()}`);
    a.stdin.write("write\n");
    say(`A: ${await fromA()}`);
    b.stdin.write("count\n");
    say(`B sees ${await fromB()}`);
    a.kill("SIGKILL");
    await new Promise((resolve) => a.on("exit", resolve));
    const next = new Database(db);
    next.prepare("INSERT INTO t VALUES (-1)").run();
    const rows = count(next);
    const check = next.pragma("integrity_check", { simple: true });
    say(
      `${variant || "old connection open"}: after kill -9 and one more write: ${rows} rows (111 acknowledged), integrity_check ${check}\n`,
    );
    next.close();
    b.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
}
