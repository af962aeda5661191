/**
 * The parts of zod the config schema uses, from one module. `npm run build`
 * replaces this file's output (dist/config/zod.js) with a single-file bundle
 * of exactly these functions (scripts/bundle-zod.mjs): importing "zod"
 * itself loads ~95 modules, 48 of them locales hearth never shows, which was
 * most of a CLI command's start-up (docs/benchmarks.md, workload 12). The
 * unbundled output (what `tsc` alone emits, e.g. the test suite's rebuild)
 * behaves the same, only slower to load.
 */
import {
  array,
  boolean,
  config,
  enum as enum_,
  gte,
  int as integer,
  lte,
  number,
  object,
  record,
  string,
  unknown,
} from "zod";

// The config is validated a few times per process, each a small object: zod's
// JIT (a `new Function` parser per object schema, built on its first parse)
// costs more to build than it ever saves here. Set before any schema exists
// (zod reads it when a schema is built); in the bundle it is the bundle's own.
config({ jitless: true });

export const z = { array, boolean, enum: enum_, number, object, record, string, unknown };

/**
 * An integer setting in [min, max] (no upper bound without max): the same
 * checks, issues and messages as `z.number().int().min(min).max(max)`,
 * built as two schema objects instead of four (zod 4 clones the whole
 * schema for every chained check, and the configuration's sixty integer
 * settings were half of what building a section cost: src/config/once.ts).
 */
export const int = (min: number, max?: number) =>
  max === undefined ? integer().check(gte(min)) : integer().check(gte(min), lte(max));
