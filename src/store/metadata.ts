/** A JSON object as stored in a `metadata` column. */
export type JsonObject = { [key: string]: JsonValue };
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;

/** The largest metadata a session or message may carry, serialised (UTF-8 bytes). */
export const MAX_METADATA_BYTES = 16 * 1024;
/** How deep metadata may nest. */
export const MAX_METADATA_DEPTH = 16;
/** The longest owner id. */
export const MAX_OWNER_ID_LENGTH = 256;

/**
 * Validate metadata (a plain JSON object: strings, finite numbers,
 * booleans, null, arrays and plain objects, nested at most
 * MAX_METADATA_DEPTH deep, at most MAX_METADATA_BYTES serialised) and
 * serialise it. undefined and null both mean "none". Throws TypeError or
 * RangeError naming `label`, before any transaction starts.
 */
export function serializeMetadata(value: unknown, label: string): string | null {
  if (value === undefined || value === null) return null;
  if (!isPlainObject(value)) throw new TypeError(`${label} must be a plain JSON object or null`);
  check(value, label, 1);
  const json = JSON.stringify(value);
  const bytes = Buffer.byteLength(json, "utf8");
  if (bytes > MAX_METADATA_BYTES) {
    throw new RangeError(
      `${label} is ${bytes} bytes as JSON; the limit is ${MAX_METADATA_BYTES} (keep large data in messages)`,
    );
  }
  return json;
}

/**
 * `current` with `patch`'s keys set over it (a shallow merge), serialised
 * and checked as serializeMetadata() does: the limits hold for the result.
 */
export function mergeMetadata(current: JsonObject | null, patch: JsonObject): string {
  return serializeMetadata({ ...current, ...patch }, "metadata") as string;
}

export function parseMetadata(json: string | null): JsonObject | null {
  return json === null ? null : (JSON.parse(json) as JsonObject);
}

/** An owner (tenant, user, resource) id: a non-empty string up to MAX_OWNER_ID_LENGTH, or null. */
export function checkOwnerId(value: unknown, label: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string" || value === "" || value.length > MAX_OWNER_ID_LENGTH) {
    throw new TypeError(
      `${label} must be a non-empty string of at most ${MAX_OWNER_ID_LENGTH} characters, or null`,
    );
  }
  return value;
}

function check(value: unknown, path: string, depth: number): void {
  if (depth > MAX_METADATA_DEPTH) {
    throw new RangeError(`${path} nests deeper than ${MAX_METADATA_DEPTH} levels`);
  }
  if (value === null || typeof value === "string" || typeof value === "boolean") return;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError(`${path} must be a finite number`);
    return;
  }
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) check(v, `${path}[${i}]`, depth + 1);
    return;
  }
  if (isPlainObject(value)) {
    for (const [k, v] of Object.entries(value)) check(v, `${path}.${k}`, depth + 1);
    return;
  }
  throw new TypeError(`${path} is not JSON (${typeof value}); metadata holds JSON values only`);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}
