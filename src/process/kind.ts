import { PROCESS_KINDS, type ProcessKind } from "./lock-map.js";

let current: ProcessKind | undefined;

/**
 * Declare what this process is (gateway, dashboard, worker, cli). It is
 * encoded in the presence locks the process takes from then on, so
 * `hearth ps` can tell kinds apart from the kernel alone. Defaults to
 * $HEARTH_PROCESS_KIND, then "unknown".
 */
export function setProcessKind(kind: ProcessKind): void {
  if (!PROCESS_KINDS.includes(kind)) {
    throw new TypeError(
      `process kind must be one of ${PROCESS_KINDS.join(", ")}, got ${JSON.stringify(kind)}`,
    );
  }
  current = kind;
}

export function processKind(): ProcessKind {
  if (current) return current;
  const fromEnv = process.env.HEARTH_PROCESS_KIND;
  return PROCESS_KINDS.find((k) => k === fromEnv) ?? "unknown";
}
