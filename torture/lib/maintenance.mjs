// CLI maintenance of a torture run: each command's exit code must tell the
// truth. Exit 0 is checked against the work it claims (a backup file that
// verifies and holds every write acknowledged before it began, a window that
// parked the live gateway, steps that are done or explained); exit 3 must
// name a live holder (`pid N`); anything else is an unexpected exit.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runNode } from "./proc.mjs";
import { CLI } from "./spawn.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
export { CLI };
export const CHECKER = join(root, "torture/check-store.mjs");

/** The commands the schedule draws from, with their arguments. */
export const COMMANDS = {
  doctor: ["doctor"],
  "doctor-fix": ["doctor", "--fix"],
  ps: ["ps"],
  backup: ["backup"],
  "optimize-window": ["sessions", "optimize", "--window"],
  // Without --window while holders live: must refuse (exit 3) naming them.
  optimize: ["sessions", "optimize"],
  "repair-window": ["sessions", "repair", "--window"],
  repair: ["sessions", "repair"],
  "restore-dry": ["restore", "--dry-run", "--yes"],
  prune: ["sessions", "prune", "--older-than", "3650", "--yes"],
  "delete-empty": ["sessions", "delete-empty"],
  export: ["sessions", "export"],
};
/** Structural: they rewrite or replace files, so they either run or refuse. */
export const STRUCTURAL = new Set(["optimize-window", "optimize", "repair-window", "repair"]);
/** They open a maintenance window on the live store (sidecars may be new after one). */
export const WINDOWED = new Set(["optimize-window", "repair-window"]);

/** Check a store file with torture/check-store.mjs: integrity and the stored clientIds. */
export async function checkFile(path) {
  const r = await runNode([CHECKER, path], { ms: 120_000 });
  try {
    return JSON.parse(r.stdout);
  } catch {
    return {
      ok: false,
      message: `checker exited ${r.signal ?? r.code}: ${r.stderr.slice(0, 500)}`,
    };
  }
}

/** clientIds of `acked` (a ledger snapshot) that the checker's rows do not hold. */
export function missing(acked, rows) {
  const stored = new Set(rows.map(([c]) => c));
  return [...acked.keys()].filter((c) => !stored.has(c));
}

/** Backup staging files left by a process that is gone (a leak: they are never listed). */
export function deadStaging(home) {
  let names = [];
  try {
    names = readdirSync(join(home, "backups"));
  } catch {
    return [];
  }
  return names.filter((n) => {
    const m = /^\.staging-.+-(\d+)-\d+\.tmp$/.exec(n);
    if (!m) return false;
    try {
      process.kill(Number(m[1]), 0);
      return false;
    } catch (err) {
      return err.code === "ESRCH";
    }
  });
}

export class Maintenance {
  constructor({ actors, stats, ledger, home }) {
    this.actors = actors;
    this.stats = stats;
    this.ledger = ledger;
    this.home = home;
    this.db = join(home, "state.db");
  }

  count(key) {
    this.stats.cli[key] = (this.stats.cli[key] ?? 0) + 1;
  }

  /** One command, `env` adding e.g. a failpoint; returns the run and its parsed JSON. */
  async run(command, { env = {}, extra = [] } = {}) {
    const windowed = WINDOWED.has(command);
    if (windowed) this.actors.windows.begin();
    try {
      return await runNode([CLI, "--home", this.home, "--json", ...COMMANDS[command], ...extra], {
        env,
      });
    } finally {
      if (windowed) this.actors.windows.end();
    }
  }

  async perform(command) {
    const ackedBefore = this.ledger.read("default");
    const gw = this.actors.gateway;
    const gwBefore = gw?.address ? gw.proc : undefined;
    const dbIno = statOrNull(this.db)?.ino;
    let extra = [];
    if (command === "restore-dry") {
      const newest = newestBackup(this.home);
      if (!newest) return this.count("restore-dry skipped (no backup yet)");
      extra = [newest];
    }
    const r = await this.run(command, { extra });
    this.count(`${command} exit ${r.signal ?? r.code}`);
    const structural = STRUCTURAL.has(command) || command === "restore-dry";
    const falseSuccess = (why) =>
      this.stats.falseSuccesses.push(`${command} exited 0 but ${why}: ${r.stdout.slice(0, 500)}`);
    if (r.code === 3) {
      if (structural) {
        this.stats.structural.refused++;
        this.count(`refused ${command}`);
      }
      if (!/pid \d+/.test(r.stderr))
        this.stats.badRefusals.push(
          `${command} exited 3 naming no holder: ${r.stderr.slice(0, 500)}`,
        );
      return;
    }
    if (r.code !== 0) {
      // doctor exits 4 when it finds a problem (a holder stopped by SIGSTOP, a WAL over its limit).
      if (!(command.startsWith("doctor") && r.code === 4))
        this.stats.unexpectedExits.push(
          `${command} exited ${r.signal ?? r.code}: ${r.stderr.slice(0, 800)}`,
        );
      return;
    }
    if (structural) this.stats.structural.run++;
    let out;
    try {
      out = command === "export" ? undefined : JSON.parse(r.stdout);
    } catch {
      return falseSuccess("printed no JSON report");
    }
    switch (command) {
      case "backup":
        return this.verifyBackup(out, ackedBefore, falseSuccess);
      case "optimize-window":
      case "optimize":
        if (
          !Array.isArray(out.steps) ||
          out.steps.length === 0 ||
          !out.steps.every((s) => s.done || s.note)
        )
          falseSuccess("its steps were not all done or explained");
        if (out.steps?.some((s) => s.step === "wal truncate" && s.done) && out.walAfter !== 0)
          falseSuccess(`it truncated the WAL but reports ${out.walAfter} bytes after`);
        return this.verifyWindow(command, out, gwBefore, falseSuccess);
      case "repair-window":
      case "repair":
        if (!out.forensicCopy || !existsSync(join(out.forensicCopy, "state.db")))
          falseSuccess("its forensic copy is missing");
        if (typeof out.strategy !== "string") falseSuccess("it names no strategy");
        return this.verifyWindow(command, out, gwBefore, falseSuccess);
      case "restore-dry":
        if (out.dryRun !== true) falseSuccess("a dry run reports dryRun false");
        if (statOrNull(this.db)?.ino !== dbIno) falseSuccess("a dry run replaced the store");
        return;
      case "doctor":
      case "doctor-fix": {
        const report = out.after ?? out;
        if (!Array.isArray(report.findings) || report.findings.length === 0)
          falseSuccess("it reports no findings");
        if (command === "doctor-fix" && !Array.isArray(out.actions))
          falseSuccess("it lists no actions");
        return;
      }
      case "prune":
      case "delete-empty": {
        const acked = new Set([...this.ledger.read().values()].map((e) => e.session));
        for (const s of out.sessions ?? []) {
          const id = typeof s === "string" ? s : s.id;
          if (acked.has(id)) this.stats.deletedAckedSessions.push(`${command}: ${id}`);
        }
        return;
      }
      case "export": {
        const lines = r.stdout.split("\n").filter((l) => l !== "");
        try {
          for (const l of lines) JSON.parse(l);
        } catch {
          falseSuccess("its JSONL does not parse");
        }
        if (ackedBefore.size > 0 && lines.length === 0)
          falseSuccess("it exported nothing from a store with acknowledged messages");
        return;
      }
      case "ps":
        if (!Array.isArray(out.profiles)) falseSuccess("it lists no profile");
        return;
    }
  }

  /** A window must report the processes it parked; a gateway that lived through it was parked (M5). */
  verifyWindow(command, out, gwBefore, falseSuccess) {
    if (!WINDOWED.has(command)) return;
    if (!Array.isArray(out.window?.parked)) return falseSuccess("it reports no window");
    if (
      gwBefore?.alive &&
      this.actors.gateway?.proc === gwBefore &&
      !out.window.parked.includes(gwBefore.pid)
    )
      falseSuccess(`its window did not park the live gateway ${gwBefore.pid}`);
  }

  /** The backup file exists, passes integrity_check and holds every write acknowledged before it began. */
  async verifyBackup(out, ackedBefore, falseSuccess) {
    if (!out.path || !existsSync(out.path) || statSync(out.path).size === 0)
      return falseSuccess("its backup file is missing or empty");
    for (const n of deadStaging(this.home))
      this.stats.diskLeaks.push(`a staging file of a dead backup outlived a later backup: ${n}`);
    if (!existsSync(out.path)) return undefined; // removed by a later backup's retention meanwhile
    const report = await checkFile(out.path);
    if (!report.ok) {
      // Retention of a backup that ran meanwhile can remove it under the checker.
      if (existsSync(out.path)) falseSuccess(`its file cannot be checked: ${report.message}`);
      return undefined;
    }
    this.stats.backupsVerified++;
    if (report.integrity.length > 0)
      falseSuccess(`its file fails integrity_check: ${report.integrity.slice(0, 3).join("; ")}`);
    const gone = missing(ackedBefore, report.rows);
    if (gone.length > 0)
      falseSuccess(
        `it lacks ${gone.length} write(s) acknowledged before it began: ${gone.slice(0, 5)}`,
      );
    return undefined;
  }

  /** A structural refusal on purpose: SIGSTOP the gateway, open a window; it must refuse naming it. */
  async stoppedWindow() {
    const gw = this.actors.gateway;
    const p = gw?.proc;
    if (!p?.alive || p.stopped || !gw.address) return;
    p.stopped = true;
    p.signal("SIGSTOP");
    let r;
    try {
      r = await this.run("optimize-window");
    } finally {
      p.stopped = false;
      p.signal("SIGCONT");
    }
    this.count(`stopped-window exit ${r.signal ?? r.code}`);
    if (r.code === 3) {
      this.stats.structural.refused++;
      this.count("refused stopped-window");
      // It may name another holder first (a worker), but it must name a pid.
      if (!/pid \d+/.test(r.stderr))
        this.stats.badRefusals.push(
          `a window exited 3 naming no holder: ${r.stderr.slice(0, 500)}`,
        );
    } else if (r.code === 0 && p.alive && this.actors.gateway?.proc === p) {
      this.stats.falseSuccesses.push(
        `optimize --window exited 0 while the gateway ${p.pid} was stopped: ${r.stdout.slice(0, 300)}`,
      );
    } else if (r.code !== 0) {
      this.stats.unexpectedExits.push(`stopped-window exited ${r.signal ?? r.code}: ${r.stderr}`);
    }
  }
}

function newestBackup(home) {
  let names = [];
  try {
    names = readdirSync(join(home, "backups"));
  } catch {
    return undefined;
  }
  const newest = names
    .filter((n) => /^default-.*\.db$/.test(n))
    .sort()
    .at(-1);
  return newest && join(home, "backups", newest);
}

function statOrNull(path) {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}
