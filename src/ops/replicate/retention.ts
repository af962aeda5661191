import type { HearthConfig } from "../../config/schema.js";
import { listReplica } from "./layout.js";
import { checkSameRun, supersede } from "./overlap.js";
import type { Target } from "./target.js";

/**
 * replicate.retentionMs on a profile's replica: a generation other than the
 * current one goes once its newest object is older than the retention;
 * in the current one, snapshots older than it go (never the newest), and
 * with them the WAL segments no remaining snapshot needs (those of an
 * earlier walSeq than the oldest snapshot kept). A segment superseded by a
 * longer one re-shipped from the same frame (overlap.ts) goes once the
 * longer one is older than the retention: every restore inside it then
 * applies the longer one. Not when the two are of different WAL runs: a
 * restore refuses those, and both stay as the evidence. What a restore to
 * any time inside the retention needs stays.
 */
export async function applyRetention(
  target: Target,
  profile: string,
  current: string,
  options: HearthConfig["replicate"],
  now = Date.now(),
): Promise<string[]> {
  const cutoff = now - options.retentionMs;
  const { snapshots, segments } = await listReplica(target, profile);
  const doomed: string[] = [];
  const newest = new Map<string, number>();
  for (const item of [...snapshots, ...segments])
    newest.set(item.generation, Math.max(newest.get(item.generation) ?? 0, item.at));
  for (const [generation, at] of newest)
    if (generation !== current && at < cutoff)
      for (const item of [...snapshots, ...segments])
        if (item.generation === generation) doomed.push(item.key);
  const mine = snapshots.filter((s) => s.generation === current);
  // Keep the newest snapshot taken at or before the cutoff (restores to the cutoff need it) and all later ones.
  const base = mine.filter((s) => s.at <= cutoff).pop();
  const kept = mine.filter((s) => s === base || s.at > cutoff);
  if (kept.length > 0) {
    for (const s of mine) if (!kept.includes(s)) doomed.push(s.key);
    const oldestSeq = Math.min(...kept.map((s) => s.walSeq));
    for (const seg of segments)
      if (seg.generation === current && seg.walSeq < oldestSeq) doomed.push(seg.key);
  }
  for (const pair of supersede(segments).superseded) {
    if (pair.long.at > cutoff || doomed.includes(pair.short.key)) continue;
    const same = await checkSameRun(target, pair).then(
      () => true,
      () => false,
    );
    if (same) doomed.push(pair.short.key);
  }
  if (doomed.length > 0) await target.remove(doomed);
  return doomed;
}
