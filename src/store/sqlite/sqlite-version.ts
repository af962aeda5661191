/**
 * SQLite 3.7.0 through 3.51.2 can corrupt a WAL database when a checkpoint
 * resets the WAL while another connection writes (the WAL-reset bug, fixed
 * in 3.51.3 and backported to 3.44.6 and 3.50.7).
 */
/** Release lines that received the fix, and the first patch on each that has it. */
const FIXED_BACKPORTS: Record<string, number> = { "3.44": 6, "3.50": 7 };

export function parseVersion(version: string): [number, number, number] {
  const match = /^(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!match) throw new RangeError(`not a SQLite version: ${JSON.stringify(version)}`);
  return [Number(match[1]), Number(match[2]), Number(match[3])];
}

export function hasWalResetBug(version: string): boolean {
  const [major, minor, patch] = parseVersion(version);
  const firstFixed = FIXED_BACKPORTS[`${major}.${minor}`];
  if (firstFixed !== undefined && patch >= firstFixed) return false;
  const n = major * 1_000_000 + minor * 1_000 + patch;
  return n >= 3_007_000 && n < 3_051_003;
}
