import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensurePrivateDir } from "../files/create.js";
import { maskArgv } from "../mask-secrets.js";
import { currentIdentity, type Liveness, liveness, type ProcessIdentity } from "./identity.js";
import type { ProcessKind } from "./lock-map.js";

/**
 * Marker files say more about a holder than the kernel can (P2): its kind,
 * argv, when it started, the profile and database it serves. They are
 * informational only: nothing ever waits or refuses because of a marker;
 * the kernel-held locks decide. A marker whose process is gone is stale and
 * is swept by the next writer that opens the profile.
 */
export interface Marker extends ProcessIdentity {
  kind: ProcessKind;
  argv: string[];
  /** ISO time the marker was written. */
  since: string;
  profile: string;
  dbPath: string;
  /** The synchronous level the process's writer connection runs at, as SQLite reported it. */
  synchronous?: string;
  /** What its commits do off the event loop (durability.syncOffLoop), from its live writer. */
  offLoop?: "fsync+checkpoint" | "checkpoint" | "none";
}

export function runDir(profileDir: string): string {
  return join(profileDir, "run");
}

/** Write this process's marker for a profile; returns its path, or undefined where identity is unknown. */
export function writeMarker(
  profileDir: string,
  fields: Pick<Marker, "kind" | "profile" | "dbPath" | "synchronous" | "offLoop">,
): string | undefined {
  const identity = currentIdentity();
  if (!identity) return undefined;
  const dir = runDir(profileDir);
  ensurePrivateDir(dir);
  const marker: Marker = {
    ...identity,
    ...fields,
    argv: maskArgv(process.argv),
    since: new Date().toISOString(),
  };
  const path = join(dir, `${identity.pid}-${identity.startTicks}.json`);
  writeJsonAtomic(path, marker);
  track(path);
  return path;
}

/** Write a small JSON file under a temporary name, then rename it into place (0600). */
export function writeJsonAtomic(path: string, value: unknown): void {
  writeFileSync(`${path}.tmp`, `${JSON.stringify(value)}\n`, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}

export function removeMarker(path: string): void {
  live.delete(path);
  rmSync(path, { force: true });
}

/** Markers this process wrote; removed on a normal exit even without close(). */
const live = new Set<string>();
let hooked = false;

function track(path: string): void {
  live.add(path);
  if (hooked) return;
  hooked = true;
  process.once("exit", () => {
    for (const p of live) rmSync(p, { force: true });
  });
}

export interface MarkerState {
  path: string;
  marker: Marker | undefined;
  /** Liveness of the recorded identity (P1); a marker that cannot be parsed is "dead". */
  liveness: Liveness;
}

/** Every marker of a profile with the liveness of its process. Never throws. */
export function readMarkers(profileDir: string): MarkerState[] {
  const dir = runDir(profileDir);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => /^\d+-\d+\.json$/.test(n));
  } catch {
    return [];
  }
  return names.map((name) => {
    const path = join(dir, name);
    const marker = parseMarker(path);
    return { path, marker, liveness: marker ? liveness(marker) : "dead" };
  });
}

/** Remove markers whose process is provably dead. Returns the removed paths. */
export function sweepStaleMarkers(profileDir: string): string[] {
  const removed: string[] = [];
  for (const state of readMarkers(profileDir)) {
    if (state.liveness !== "dead") continue;
    removeMarker(state.path);
    removed.push(state.path);
  }
  return removed;
}

function parseMarker(path: string): Marker | undefined {
  try {
    const value = JSON.parse(readFileSync(path, "utf8")) as Partial<Marker>;
    if (
      typeof value.pid !== "number" ||
      typeof value.startTicks !== "number" ||
      typeof value.bootId !== "string"
    )
      return undefined;
    return value as Marker;
  } catch {
    return undefined;
  }
}
