import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import {
  chosenProfile,
  DEFAULT_PROFILE,
  databasePath,
  profileDir,
  resolveHome,
  validateProfile,
} from "../config/paths.js";
import { maskArgv } from "../mask-secrets.js";
import {
  type GhostHolder,
  type Holder,
  type HolderJson,
  holderJson,
  readHolders,
  readHoldersSettled,
  settling,
} from "../process/holders.js";
import { readMarkers } from "../process/markers.js";
import { ProcCensus } from "../process/proc-census.js";

export interface PsHolder extends HolderJson {
  /** From the holder's marker file, when it left one that matches its identity. */
  marker: { argv: string[]; profile: string; since: string } | null;
}

export interface PsProfile {
  profile: string;
  path: string;
  exists: boolean;
  holders: PsHolder[];
  /** Processes still holding a deleted generation of the database or a sidecar. */
  ghosts: { pid: number; commandLine: string | null; since: string | null; files: string[] }[];
  /** OFD locks hearth could not tie to a process. */
  unexplainedLocks: number;
  /** Pids whose descriptor table could not be read (ghost search is partial for them). */
  uninspected: number[];
  /** Markers whose process is gone: informational, swept by the next writer. */
  staleMarkers: { path: string; pid: number | null }[];
}

export interface PsReport {
  home: string;
  profiles: PsProfile[];
}

/** Every profile with a database under `home` (the default one first). */
export function listProfiles(home: string): string[] {
  const found: string[] = [];
  if (existsSync(databasePath(home, DEFAULT_PROFILE))) found.push(DEFAULT_PROFILE);
  try {
    for (const name of readdirSync(join(home, "profiles")).sort()) {
      try {
        if (existsSync(databasePath(home, validateProfile(name)))) found.push(name);
      } catch {
        // not a profile directory hearth would have made
      }
    }
  } catch {
    // no profiles directory
  }
  return found;
}

/** Who holds each profile's database (P5). Read-only: it opens no database and changes no file. */
export function runPs(options: {
  home?: string | undefined;
  profile?: string | undefined;
  /** List the calling process too (a dashboard showing who holds the store, itself included). */
  includeSelf?: boolean;
  /**
   * Read a profile with an unexplained lock again before reporting it
   * (default true; the pauses block, as fits a command). A daemon passes
   * false and re-reads with settling() instead, its pauses awaited.
   */
  settle?: boolean;
}): PsReport {
  const home = resolveHome(options.home);
  const chosen = chosenProfile(options.profile);
  const profiles = chosen !== undefined ? [chosen] : listProfiles(home);
  // One reading of /proc for every profile: each process's descriptor table is read once.
  const census = new ProcCensus();
  const includeSelf = options.includeSelf === true;
  const settle = options.settle !== false;
  return {
    home,
    profiles: profiles.map((p) => psProfile(home, p, { includeSelf, settle }, census)),
  };
}

/**
 * One profile's report for a long-lived process (the dashboard): as runPs,
 * but a lock no process explains is read again with the pauses awaited
 * (settling), never slept on the event loop.
 */
export function psProfileSettling(options: {
  home: string;
  profile: string;
  includeSelf?: boolean;
}): Promise<PsProfile> {
  return settling(() => runPs({ ...options, settle: false }).profiles[0]!);
}

function psProfile(
  home: string,
  profile: string,
  { includeSelf, settle }: { includeSelf: boolean; settle: boolean },
  census: ProcCensus,
): PsProfile {
  const path = databasePath(home, profile);
  const base: PsProfile = {
    profile,
    path,
    exists: existsSync(path),
    holders: [],
    ghosts: [],
    unexplainedLocks: 0,
    uninspected: [],
    staleMarkers: [],
  };
  const markers = readMarkers(profileDir(home, profile));
  base.staleMarkers = markers
    .filter((m) => m.liveness === "dead")
    .map((m) => ({ path: m.path, pid: m.marker?.pid ?? null }));
  if (!base.exists) return base;
  let report = readHolders(path, { includeSelf, census });
  // A process starting or exiting holds a lock for an instant that no
  // presence explains (and /proc/locks may repeat a line while others lock):
  // before saying a lock is unexplained, read again in new censuses, as a
  // decision does (readHoldersSettled: at most 4 more reads, 25 ms apart).
  if (settle && report.unexplainedLocks > 0) report = readHoldersSettled(path, { includeSelf });
  const markerOf = (h: Holder) =>
    markers.find(
      (m) =>
        m.liveness === "alive" && m.marker?.pid === h.pid && m.marker.startTicks === h.startTicks,
    )?.marker;
  base.holders = report.holders.map((h) => {
    const m = markerOf(h);
    return {
      ...holderJson(h),
      // A marker left by an older hearth may hold an unmasked argv.
      marker: m ? { argv: maskArgv(m.argv), profile: m.profile, since: m.since } : null,
    };
  });
  base.ghosts = report.ghosts.map((g: GhostHolder) => ({
    pid: g.pid,
    commandLine: g.commandLine ?? null,
    since: g.since?.toISOString() ?? null,
    files: g.files,
  }));
  base.unexplainedLocks = report.unexplainedLocks;
  base.uninspected = report.uninspected;
  return base;
}
