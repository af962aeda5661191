import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { currentIdentity, liveness, type ProcessIdentity } from "../process/identity.js";

export interface RuntimeInfo {
  pid: number;
  address: string;
  profiles: string[];
  /** The writer's identity (P1), so a later dashboard can tell whether it still runs. */
  startTicks?: number;
  bootId?: string;
  /** The dashboard this one replaced while it still ran: restored when this one stops. */
  previous?: RuntimeInfo;
}

/**
 * `$HEARTH_HOME/dashboard.json`: where the running dashboard listens, so
 * `hearth dashboard link` can print a link to it (port 0 picks a free
 * port). Informational only: nothing gates on it.
 */
export function runtimeFile(home: string): string {
  return join(home, "dashboard.json");
}

/** Whether the record's dashboard may still run: pid, start ticks and boot id (P1); no identity, no. */
function running(info: RuntimeInfo): boolean {
  if (info.startTicks === undefined || info.bootId === undefined) return false;
  const id: ProcessIdentity = { pid: info.pid, startTicks: info.startTicks, bootId: info.bootId };
  return liveness(id) !== "dead";
}

/** The first dashboard of a record's chain that still runs (dead ones are dropped). */
function firstRunning(info: RuntimeInfo | undefined): RuntimeInfo | undefined {
  for (let at = info; at; at = at.previous) if (running(at)) return at;
  return undefined;
}

function write(home: string, info: RuntimeInfo): void {
  writeFileSync(runtimeFile(home), `${JSON.stringify(info)}\n`, { mode: 0o600 });
}

/**
 * Record this dashboard. A second dashboard on the same home takes the file
 * over and keeps the first's record as `previous` while the first runs, so
 * stopping the second gives the file back to the first (issue 47).
 */
export function writeRuntimeFile(
  home: string,
  info: Pick<RuntimeInfo, "pid" | "address" | "profiles">,
): void {
  const self = currentIdentity();
  const previous = firstRunning(readRuntimeFile(home));
  write(home, {
    ...info,
    ...(self && self.pid === info.pid ? { startTicks: self.startTicks, bootId: self.bootId } : {}),
    ...(previous && previous.pid !== info.pid ? { previous } : {}),
  });
}

export function readRuntimeFile(home: string): RuntimeInfo | undefined {
  try {
    const info = JSON.parse(readFileSync(runtimeFile(home), "utf8")) as RuntimeInfo;
    return typeof info.address === "string" && typeof info.pid === "number" ? info : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Remove the file when it is still ours (a newer dashboard may have replaced
 * it); when a dashboard we replaced still runs, its record goes back instead.
 */
export function removeRuntimeFile(home: string, pid: number): void {
  const info = readRuntimeFile(home);
  if (info?.pid !== pid) return;
  const previous = firstRunning(info.previous);
  if (previous) write(home, previous);
  else rmSync(runtimeFile(home), { force: true });
}
