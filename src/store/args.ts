/**
 * API misuse: a caller passed an argument of the wrong type or out of
 * range. It throws a plain TypeError or RangeError naming the argument (so
 * `instanceof TypeError` holds), carrying the stable code
 * HEARTH_INVALID_ARG as undici's errors carry theirs. Backend-neutral: the
 * SQLite and PostgreSQL stores check their arguments with the same helpers.
 */
import type { HearthErrorCode } from "../errors.js";

export const INVALID_ARG = "HEARTH_INVALID_ARG" satisfies HearthErrorCode;

export type MisuseError = (TypeError | RangeError) & { code: typeof INVALID_ARG };

/**
 * `err` with `code: "HEARTH_INVALID_ARG"` when it is a TypeError or
 * RangeError without a code of its own (the same object: its class, message
 * and stack stay); anything else is returned as it is.
 */
export function markMisuse<T>(err: T): T {
  if ((err instanceof TypeError || err instanceof RangeError) && !("code" in err)) {
    Object.defineProperty(err, "code", {
      value: INVALID_ARG,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return err;
}

/** A TypeError with code HEARTH_INVALID_ARG. */
export function invalidArg(message: string): MisuseError {
  return markMisuse(new TypeError(message)) as MisuseError;
}

/** Throws a coded TypeError unless `value` is a string; `name` is the argument as the caller knows it. */
export function requireString(value: unknown, name: string): asserts value is string {
  if (typeof value !== "string") {
    throw invalidArg(`${name} must be a string, got ${describe(value)}`);
  }
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return "a string";
  if (typeof value === "number" || typeof value === "bigint" || typeof value === "boolean") {
    return `${typeof value} ${String(value)}`;
  }
  return typeof value;
}
