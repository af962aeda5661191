// What the bench ran on: CPU, memory, kernel, Node, SQLite, the filesystem
// of the temp dir the stores live in, the load before the run, the commit.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import os from "node:os";
import Database from "better-sqlite3";
import { openStore } from "../../dist/index.js";
import { removeDir, tempDir } from "./stores.mjs";

function version(pkg) {
  const url = new URL(`../../node_modules/${pkg}/package.json`, import.meta.url);
  return JSON.parse(readFileSync(url, "utf8")).version;
}

function git(args) {
  try {
    return execFileSync("git", args, {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return null;
  }
}

export async function machine() {
  const cpus = os.cpus();
  const db = new Database(":memory:");
  const sqlite = db.prepare("SELECT sqlite_version()").pluck().get();
  db.close();
  const home = tempDir("machine");
  const store = await openStore({ home });
  const durability = await store.durability();
  await store.close();
  removeDir(home);
  const commit = git(["rev-parse", "--short", "HEAD"]);
  const dirty = git(["status", "--porcelain"]);
  return {
    cpuModel: cpus[0]?.model ?? "unknown",
    cpuCount: cpus.length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    kernel: `${os.type()} ${os.release()}`,
    arch: os.arch(),
    node: process.version,
    sqlite,
    betterSqlite3: version("better-sqlite3"),
    tinybench: version("tinybench"),
    tmpdir: os.tmpdir(),
    filesystem: durability.filesystem.fstype,
    loadAverage: os.loadavg().map((v) => Math.round(v * 100) / 100),
    commit: commit ? `${commit}${dirty ? " (with uncommitted changes)" : ""}` : null,
  };
}

/** The machine as Markdown bullet lines. */
export function machineMarkdown(m, loadAfter) {
  return [
    `- CPU: ${m.cpuModel}, ${m.cpuCount} logical CPUs (os.cpus()), ${m.arch}`,
    `- memory: ${m.memoryGiB} GiB`,
    `- kernel: ${m.kernel}`,
    `- Node ${m.node}, SQLite ${m.sqlite} (better-sqlite3 ${m.betterSqlite3}), tinybench ${m.tinybench}`,
    `- stores in ${m.tmpdir} on ${m.filesystem}`,
    `- load average (1/5/15 min) before the run: ${m.loadAverage.join(" / ")}${loadAfter ? `; after: ${loadAfter.join(" / ")}` : ""}`,
    ...(m.commit ? [`- hearth at ${m.commit}`] : []),
  ].join("\n");
}
