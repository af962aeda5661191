import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface RuntimeInfo {
  pid: number;
  address: string;
  profiles: string[];
}

/**
 * `$HEARTH_HOME/dashboard.json`: where the running dashboard listens, so
 * `hearth dashboard link` can print a link to it (port 0 picks a free
 * port). Informational only: nothing gates on it.
 */
export function runtimeFile(home: string): string {
  return join(home, "dashboard.json");
}

export function writeRuntimeFile(home: string, info: RuntimeInfo): void {
  writeFileSync(runtimeFile(home), `${JSON.stringify(info)}\n`, { mode: 0o600 });
}

export function readRuntimeFile(home: string): RuntimeInfo | undefined {
  try {
    const info = JSON.parse(readFileSync(runtimeFile(home), "utf8")) as RuntimeInfo;
    return typeof info.address === "string" && typeof info.pid === "number" ? info : undefined;
  } catch {
    return undefined;
  }
}

/** Remove the file when it is still ours (a newer dashboard may have replaced it). */
export function removeRuntimeFile(home: string, pid: number): void {
  if (readRuntimeFile(home)?.pid === pid) rmSync(runtimeFile(home), { force: true });
}
