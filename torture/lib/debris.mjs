// Debris at the end of a torture run, once every process is stopped: what
// crashes left behind that the product does not clean by itself. Per
// profile, one more `hearth backup` (it sweeps the staging files of dead
// backups), then `hearth doctor`: no backup staging file, stale marker,
// ghost generation or unknown holder may remain, and a ghost copy
// (`state.db.ghost-…`) only when a HEARTH_GENERATION_LOST report named it.
// No `-journal` may lie beside a database.
import { existsSync } from "node:fs";
import { CLI, deadStaging } from "./maintenance.mjs";
import { runNode } from "./proc.mjs";

const DEBRIS = new Set(["backup_staging", "stale_markers", "ghost_generation", "holders_unknown"]);

export async function finalDebris({ home, stats, profiles, checks, faults }) {
  for (const profile of profiles) {
    const base = [CLI, "--home", home, "--profile", profile, "--json"];
    const b = await runNode([...base, "backup"]);
    if (b.code !== 0)
      stats.unexpectedExits.push(
        `final backup of ${profile} exited ${b.code}: ${b.stderr.slice(0, 400)}`,
      );
    const r = await runNode([...base, "doctor"]);
    let findings = [];
    try {
      findings = JSON.parse(r.stdout).findings ?? [];
    } catch {
      stats.unexpectedExits.push(
        `final doctor of ${profile} exited ${r.code}: ${r.stderr.slice(0, 400)}`,
      );
    }
    for (const f of findings) {
      if (f.severity === "ok") continue;
      if (DEBRIS.has(f.code) || (f.code === "ghost_copy" && faults.loud.length === 0))
        stats.debris.push(`${profile}: doctor ${f.code} (${f.severity}): ${f.message}`);
      if (f.code === "ghost_copy") stats.fleet.ghostCopies = (stats.fleet.ghostCopies ?? 0) + 1;
    }
    const db = checks.dbOf(profile);
    if (existsSync(`${db}-journal`)) stats.debris.push(`${profile}: ${db}-journal left behind`);
  }
  for (const n of deadStaging(home)) stats.debris.push(`a dead backup's staging file: ${n}`);
}
