import type { Public } from "../public.js";
import type { Stats } from "../stats.js";
import { notBuilt } from "./not-built.js";
import type { PgDb } from "./pool.js";

/** Placeholder: pg-modules builds the real one; the lead replaces this file at merge. */
export const PgStats = class {
  constructor(_db: PgDb) {
    // biome-ignore lint/correctness/noConstructorReturn: a stand-in until the real module lands
    return notBuilt<Public<Stats>>("stats");
  }
} as unknown as new (
  db: PgDb,
) => Public<Stats>;
