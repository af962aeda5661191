import { HearthError } from "../errors.js";

/** pino's levels: the numbers every hearth log line carries in `level`. */
export const LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const;

export type LevelName = keyof typeof LEVELS;

/** The name of a level number (the nearest lower name for an odd number: 45 is warn). */
export function levelName(level: number): LevelName {
  let found: LevelName = "trace";
  for (const [name, n] of Object.entries(LEVELS) as [LevelName, number][])
    if (level >= n) found = name;
  return found;
}

/** A `--level` or `?level=` value: a level name; anything else is HEARTH_USAGE naming the choices. */
export function parseLevel(value: string): number {
  const n = LEVELS[value as LevelName];
  if (n === undefined)
    throw new HearthError("HEARTH_USAGE", `unknown log level ${JSON.stringify(value)}`, {
      hint: `use one of ${Object.keys(LEVELS).join(", ")}`,
    });
  return n;
}
