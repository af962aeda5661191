// Faults on the live stores of a torture run, next to the processes using
// them:
//
// - wal-delete: `state.db-wal` and `-shm` of a profile are unlinked under
//   live processes (issue 41.1). docs/durability.md (F3): a process saves
//   the commits only the removed WAL holds, or refuses loudly with
//   HEARTH_GENERATION_LOST, keeping them in `state.db.ghost-…` (the gateway
//   then exits 78). So an acknowledged write missing afterwards counts as
//   lost unless such a report came and a ghost copy holds it; and writes
//   must be acknowledged again on that profile within RECOVER_MS (no 5xx
//   loop), and no process may keep the removed files past GHOST_GRACE_MS.
// - damage: bytes of a page of a real index overwritten in the live
//   database of a supervised profile, then `hearth sessions repair
//   --window` while the other processes run; the store must pass
//   integrity_check after it and keep every acknowledged write (an index
//   holds nothing a rebuild cannot restore).
// - stray-inside: the gateway or dashboard itself opens and closes a
//   handle on state.db and its sidecars (torture/stray-inside.mjs).
import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CLI, checkFile } from "./maintenance.mjs";
import { runNode, stderrWatchers } from "./proc.mjs";

const SCRATCH_TOOL = fileURLToPath(new URL("../scratch-tool.mjs", import.meta.url));
const GHOST_GRACE_MS = 30_000;
const RECOVER_MS = 30_000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const inode = (path) => {
  try {
    return statSync(path).ino;
  } catch {
    return undefined;
  }
};

export class Faults {
  constructor({ actors, stats, ledger, home, strayDir }) {
    this.actors = actors;
    this.stats = stats;
    this.ledger = ledger;
    this.home = home;
    this.strayDir = strayDir;
    this.deletedAt = new Map(); // profile -> ms
    this.damaged = new Set(); // profiles damaged and not yet repaired
    this.removedInodes = new Set(); // the -wal/-shm inodes this run deleted
    this.loud = []; // stderr lines reporting HEARTH_GENERATION_LOST
    this.ghostRows = new Map(); // ghost copy path -> Set of clientIds
    stderrWatchers.add((proc, chunk) => {
      if (!chunk.includes("HEARTH_GENERATION_LOST") && !chunk.includes("generation_lost")) return;
      for (const line of chunk.split("\n"))
        if (/HEARTH_GENERATION_LOST|generation_lost/.test(line))
          this.loud.push(`${proc.name} ${proc.pid}: ${line.slice(0, 600)}`);
    });
  }

  dbOf(profile) {
    return this.actors.checks.dbOf(profile);
  }

  /** A descriptor on a file this run deleted, within GHOST_GRACE_MS of the deletion. */
  inGrace(profile, ino) {
    const at = this.deletedAt.get(profile);
    return at !== undefined && Date.now() - at < GHOST_GRACE_MS && this.removedInodes.has(ino);
  }

  /** The ghost copy holding `clientId` when a loss was reported loudly, else undefined. */
  async reportedLoss(profile, clientId) {
    if (this.loud.length === 0) return undefined;
    const dir = join(this.dbOf(profile), "..");
    for (const name of readdirSync(dir).filter((n) => n.startsWith("state.db.ghost-"))) {
      const path = join(dir, name);
      if (!this.ghostRows.has(path)) {
        const report = await checkFile(path);
        // A copy still being written (VACUUM INTO of the process that reports the loss) does
        // not read: it is read again at the next check, never remembered as empty.
        if (!report.ok) continue;
        this.ghostRows.set(path, new Set(report.rows.map(([c]) => c)));
      }
      if (this.ghostRows.get(path).has(clientId)) return path;
    }
    return undefined;
  }

  /** The ledger count of writes to `profile`: it must grow again after a fault. */
  acked(profile) {
    return this.ledger.count(undefined, profile);
  }

  async waitProgress(profile, label) {
    const before = this.acked(profile);
    const t0 = Date.now();
    while (this.acked(profile) === before) {
      if (this.actors.stopping) return;
      if (Date.now() - t0 > RECOVER_MS) {
        this.stats.neverRecovered.push(
          `${label}: no write to ${profile} acknowledged within ${RECOVER_MS} ms`,
        );
        return;
      }
      await sleep(50);
    }
    this.stats.faults.recoverMs.push(Date.now() - t0);
  }

  // --- a WAL removed under live processes --------------------------------

  async walDelete(profile) {
    if (profile !== "default" && !this.actors.fleet.startedOnce) return;
    const db = this.dbOf(profile);
    if (!existsSync(`${db}-wal`)) return void this.stats.faults.walDeleteSkipped++;
    // The sidecar-inode rule does not hold across a deletion: it counts as a window.
    this.actors.windows.begin();
    try {
      this.deletedAt.set(profile, Date.now());
      // Only the removed files get the grace: a descriptor on a newer -wal/-shm
      // that is deleted too (someone unlinked the new generation) is a ghost at once.
      for (const x of ["-wal", "-shm"]) {
        const ino = inode(db + x);
        if (ino !== undefined) this.removedInodes.add(ino);
      }
      rmSync(`${db}-wal`, { force: true });
      rmSync(`${db}-shm`, { force: true });
      this.stats.faults.walDeleted[profile] = (this.stats.faults.walDeleted[profile] ?? 0) + 1;
      this.actors.trace(`deleted ${db}-wal and -shm`);
      await this.waitProgress(profile, `after ${profile}'s -wal and -shm were deleted`);
    } finally {
      this.actors.windows.end();
    }
    await this.actors.checks.run(`after ${profile}'s WAL was deleted`);
  }

  // --- real damage, then repair, while the other processes run ------------

  async damageAndRepair(profile) {
    if (!this.actors.fleet.startedOnce) return;
    // No check may run between the damage and its repair: they would count the damage itself.
    const queued = Date.now();
    const job = this.actors.checks.queue.then(() => {
      this.actors.trace(
        `damage of ${profile}: the checks before it took ${Date.now() - queued} ms`,
      );
      return this.damageExclusive(profile);
    });
    this.actors.checks.queue = job;
    await job;
    await this.waitProgress(profile, `after the repair of ${profile}`);
    await this.actors.checks.run(`after ${profile} was damaged and repaired`);
  }

  /** A key for an answer: those while a store is damaged on purpose are counted apart. */
  label(key) {
    return this.damaged.size > 0 ? `while damaged: ${key}` : key;
  }

  async damageExclusive(profile) {
    this.damaged.add(profile);
    try {
      await this.damageRepair(profile);
    } finally {
      this.damaged.delete(profile);
    }
  }

  async damageRepair(profile) {
    const db = this.dbOf(profile);
    // Every index page may have a newer copy in the WAL for a while: try again until one has none.
    let d;
    let tries = 0;
    const t0 = Date.now();
    for (; Date.now() - t0 < 20_000; await sleep(500)) {
      tries++;
      d = await runNode([SCRATCH_TOOL, "damage-index", db]);
      if (d.code !== 2) break;
    }
    this.actors.trace(`damage-index on ${profile}: ${tries} tries, ${Date.now() - t0} ms`);
    if (d.code === 2) return void this.stats.faults.damage.skipped++;
    if (d.code !== 0)
      return void this.stats.unexpectedExits.push(`damage-index exited ${d.code}: ${d.stderr}`);
    this.stats.faults.damage.done++;
    this.actors.trace(`damaged ${db}: ${d.stdout.trim()}`);
    const before = await checkFile(db);
    if (before.ok && before.integrity.length === 0) {
      // A newer copy of the page sat in the WAL: a checkpoint writes it over the damage.
      this.stats.faults.damage.notVisible++;
    } else this.stats.faults.damage.detected++;
    // The repair's window renames the repaired file over the database: the parked
    // holders keep the old one until they resume (the descriptor check allows that
    // while a window runs).
    this.actors.windows.begin();
    try {
      await this.repair(profile, db);
    } finally {
      this.actors.windows.end();
    }
  }

  async repair(profile, db) {
    for (let attempt = 0; attempt < 10; attempt++) {
      const r = await runNode([
        CLI,
        "--home",
        this.home,
        "--profile",
        profile,
        "--json",
        "sessions",
        "repair",
        "--window",
      ]);
      const key = `repair ${profile} after damage exit ${r.signal ?? r.code}`;
      this.stats.cli[key] = (this.stats.cli[key] ?? 0) + 1;
      if (r.code === 3) {
        if (!/pid \d+/.test(r.stderr))
          this.stats.badRefusals.push(
            `repair after damage exited 3 naming no holder: ${r.stderr.slice(0, 400)}`,
          );
        await sleep(500);
        continue;
      }
      if (r.code !== 0) {
        this.stats.unexpectedExits.push(
          `repair of a damaged ${profile} exited ${r.signal ?? r.code}: ${r.stderr.slice(0, 800)}`,
        );
        break;
      }
      this.stats.faults.damage.repaired++;
      const after = await checkFile(db);
      if (!after.ok || after.integrity.length > 0)
        this.stats.falseSuccesses.push(
          `repair of a damaged ${profile} exited 0 but the store fails its check: ${after.message ?? after.integrity.slice(0, 3).join("; ")}`,
        );
      return;
    }
    this.stats.faults.damage.unrepaired++;
  }

  // --- stray descriptors inside a live gateway or dashboard ---------------

  async strayInside(pick) {
    const targets = [];
    const g = this.actors.gateway?.proc;
    if (g?.alive && !g.stopped) targets.push({ name: "gateway", pid: g.pid });
    const d = this.actors.dashboard?.proc;
    if (d?.alive && !d.stopped) targets.push({ name: "dashboard", pid: d.pid });
    for (const [name, pid] of Object.entries(this.actors.fleet?.children ?? {}))
      if (name !== "scheduler") targets.push({ name: `start/${name}`, pid });
    if (targets.length === 0) return;
    const t = targets[Math.floor(pick * targets.length)];
    const profiles = this.actors.checks.profiles();
    const paths = profiles.flatMap((p) => ["", "-wal", "-shm"].map((x) => this.dbOf(p) + x));
    const done = join(this.strayDir, `${t.pid}.done`);
    rmSync(done, { force: true });
    writeFileSync(join(this.strayDir, `${t.pid}.req`), JSON.stringify(paths));
    const t0 = Date.now();
    while (!existsSync(done) && Date.now() - t0 < 10_000) await sleep(50);
    if (!existsSync(done)) return void this.stats.faults.strayInsideMissed++;
    rmSync(done, { force: true });
    const kind = t.name.replace(/^start\//, "");
    this.stats.faults.strayInside[kind] = (this.stats.faults.strayInside[kind] ?? 0) + 1;
    this.actors.trace(`stray open/close inside ${t.name} ${t.pid}`);
  }
}
