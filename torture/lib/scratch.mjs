// Restore drills and the failpoints that would cost acknowledged data on the
// live store: a fresh backup of the live store is restored into a scratch
// home (it must verify and hold every write acknowledged before the backup
// began), and then, on that scratch copy, `hearth sessions repair` is
// killed at `repair.mid-promote` (after its FTS index is damaged) or a
// migration one version past this build's is killed at
// `migrate.mid-migration`; each must leave the store as the failpoint's
// promise says (docs/reliability.md) and then finish. `backup.mid-publish`
// fires on the live store: no half-published backup is ever listed and the
// next backup works (and sweeps the dead one's staging file).
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CLI, checkFile, missing } from "./maintenance.mjs";
import { runNode } from "./proc.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const MIGRATE_NEXT = join(root, "test/fixtures/migrate-next.mjs");
const SCRATCH_TOOL = join(root, "torture/scratch-tool.mjs");
const sha = (p) => createHash("sha256").update(readFileSync(p)).digest("hex");

export class Scratch {
  constructor({ stats, ledger, home, dir, maintenance }) {
    this.stats = stats;
    this.ledger = ledger;
    this.home = home;
    this.dir = dir;
    this.maintenance = maintenance;
    this.seq = 0;
  }

  fail(why) {
    this.stats.falseSuccesses.push(`scratch: ${why}`);
  }

  hearth(home, args, env = {}) {
    return runNode([CLI, "--home", home, "--json", ...args], {
      env: { HEARTH_FAILPOINTS: "", ...env },
    });
  }

  /** Backup, restore into a scratch home, verify, then one failpoint drill there. */
  async drill(kind) {
    const ackedBefore = this.ledger.read("default");
    const b = await this.hearth(this.home, ["backup"]);
    if (b.code !== 0) {
      if (b.code !== 3 && !/HEARTH_NO_SPACE/.test(b.stderr))
        this.stats.unexpectedExits.push(`scratch backup exited ${b.signal ?? b.code}: ${b.stderr}`);
      return;
    }
    const file = JSON.parse(b.stdout).path;
    const home = join(this.dir, `scratch-${this.seq++}`);
    mkdirSync(home, { mode: 0o700 });
    try {
      // The backup may be gone already (retention of a backup that ran meanwhile): not a failure.
      const r = await this.hearth(home, ["restore", "--yes", file]);
      if (r.code !== 0) {
        if (!/HEARTH_BACKUP_INVALID|ENOENT|not found|no such/i.test(r.stderr))
          this.stats.unexpectedExits.push(`restore into scratch exited ${r.code}: ${r.stderr}`);
        return;
      }
      this.stats.restores++;
      const report = await checkFile(join(home, "state.db"));
      if (!report.ok) return this.fail(`the restored store cannot be checked: ${report.message}`);
      if (report.integrity.length > 0)
        return this.fail(`the restored store fails integrity_check: ${report.integrity[0]}`);
      const gone = missing(ackedBefore, report.rows);
      if (gone.length > 0)
        return this.fail(
          `the restored store lacks ${gone.length} acknowledged write(s): ${gone.slice(0, 5)}`,
        );
      if (kind === "repair") await this.repairDrill(home);
      else await this.migrateDrill(home, report.rows.length);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }

  /** repair.mid-promote: the forensic copy is the damaged store byte for byte; repair then finishes. */
  async repairDrill(home) {
    const db = join(home, "state.db");
    const damage = await runNode([SCRATCH_TOOL, "damage-fts", db]);
    if (damage.code === 2) return void this.stats.drills.skipped++;
    if (damage.code !== 0) return this.fail(`could not damage the FTS index: ${damage.stderr}`);
    const damaged = sha(db);
    const killed = await this.hearth(home, ["sessions", "repair"], {
      HEARTH_FAILPOINTS: "repair.mid-promote=kill",
    });
    this.stats.failpoints["repair.mid-promote"].armed++;
    if (killed.signal !== "SIGKILL")
      return this.fail(`repair.mid-promote did not fire (exit ${killed.code}): ${killed.stderr}`);
    this.stats.failpoints["repair.mid-promote"].fired++;
    const forensic = join(home, "backups", "forensic");
    const copies = readdirSync(forensic).filter((n) => !n.startsWith("."));
    if (copies.length !== 1 || sha(join(forensic, copies[0], "state.db")) !== damaged)
      return this.fail("the forensic copy is not the damaged store byte for byte");
    if (sha(db) !== damaged) return this.fail("the damaged original was changed before promote");
    const again = await this.hearth(home, ["sessions", "repair"]);
    if (again.code !== 0)
      return this.fail(`repair after the kill exited ${again.code}: ${again.stderr}`);
    const report = await checkFile(db);
    if (!report.ok || report.integrity.length > 0)
      return this.fail(
        `the repaired store fails its check: ${report.message ?? report.integrity[0]}`,
      );
    this.stats.drills.repair++;
  }

  /** migrate.mid-migration: the migration rolls back whole; the store opens; it then completes. */
  async migrateDrill(home, rows) {
    const db = join(home, "state.db");
    const before = await runNode([SCRATCH_TOOL, "version", db]);
    const killed = await runNode([MIGRATE_NEXT, home], {
      env: { HEARTH_FAILPOINTS: "migrate.mid-migration=kill" },
    });
    this.stats.failpoints["migrate.mid-migration"].armed++;
    if (killed.signal !== "SIGKILL")
      return this.fail(
        `migrate.mid-migration did not fire (exit ${killed.code}): ${killed.stderr}`,
      );
    this.stats.failpoints["migrate.mid-migration"].fired++;
    const after = await runNode([SCRATCH_TOOL, "version", db]);
    if (after.stdout !== before.stdout)
      return this.fail(
        `a killed migration left the schema at ${after.stdout} (was ${before.stdout})`,
      );
    const report = await checkFile(db);
    if (!report.ok || report.integrity.length > 0 || report.rows.length !== rows)
      return this.fail(
        `the store after a killed migration fails its check: ${JSON.stringify(report).slice(0, 300)}`,
      );
    const done = await runNode([MIGRATE_NEXT, home], { env: { HEARTH_FAILPOINTS: "" } });
    if (done.code !== 0)
      return this.fail(`the migration after the kill exited ${done.code}: ${done.stderr}`);
    this.stats.drills.migrate++;
  }

  /** backup.mid-publish on the live store: nothing half-published is listed; the next backup works. */
  async backupMidPublish() {
    const killed = await this.hearth(this.home, ["backup"], {
      HEARTH_FAILPOINTS: "backup.mid-publish=kill",
    });
    this.stats.failpoints["backup.mid-publish"].armed++;
    if (killed.signal !== "SIGKILL") {
      if (killed.code !== 3 && !/HEARTH_NO_SPACE/.test(killed.stderr))
        this.fail(`backup.mid-publish did not fire (exit ${killed.code}): ${killed.stderr}`);
      return;
    }
    this.stats.failpoints["backup.mid-publish"].fired++;
    const listed = readdirSync(join(this.home, "backups")).filter(
      (n) => n.endsWith(".db") && !n.startsWith("."),
    );
    const staged = readdirSync(join(this.home, "backups")).filter((n) => n.startsWith(".staging-"));
    if (staged.length === 0)
      this.fail("a backup killed mid-publish left no staged copy (did it publish?)");
    if (listed.some((n) => n.includes(String(killed.pid))))
      this.fail("a backup killed mid-publish is listed");
    // The next backup works and sweeps the dead process's staging file
    // (Maintenance.verifyBackup counts any it left as a disk leak).
    await this.maintenance.perform("backup");
  }
}
