import { HearthError, isHearthError, toHearthError } from "../errors.js";

/** Exit codes: a documented contract (docs/cli.md). */
export const EXIT = { ok: 0, error: 1, usage: 2, refused: 3, problems: 4 } as const;

export interface OutputOptions {
  json: boolean;
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

const REFUSAL_CODES = new Set([
  "HEARTH_STORE_HELD",
  "HEARTH_HOLDERS_UNKNOWN",
  "HEARTH_MAINTENANCE_RUNNING",
  "HEARTH_GATEWAY_RUNNING",
  "HEARTH_BUSY",
]);

/** Print an error (text or JSON on stderr) and return the exit code it deserves. */
export function reportError(err: unknown, options: OutputOptions): number {
  // API misuse (TypeError, RangeError naming the option) is a usage error; anything else unexpected is HEARTH_INTERNAL.
  const error =
    !isHearthError(err) && (err instanceof TypeError || err instanceof RangeError)
      ? new HearthError("HEARTH_USAGE", err.message, { cause: err })
      : toHearthError(err);
  if (options.json) {
    process.stderr.write(`${JSON.stringify({ error: error.toJSON() }, null, 2)}\n`);
  } else {
    process.stderr.write(`Error: ${error.message}\n`);
    if (error.hint) process.stderr.write(`Try: ${error.hint}\n`);
  }
  if (isHearthError(err) && REFUSAL_CODES.has(err.code)) return EXIT.refused;
  if (error.code === "HEARTH_USAGE" || error.code === "HEARTH_PROFILE_INVALID") return EXIT.usage;
  return EXIT.error;
}
