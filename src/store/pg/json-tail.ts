import type { JsonTail } from "../json-tail.js";
import type { Public } from "../public.js";
import { notBuilt } from "./not-built.js";
import type { PgDb } from "./pool.js";

/** Placeholder: pg-modules builds the real one; the lead replaces this file at merge. */
export const PgJsonTail = class {
  constructor(_db: PgDb) {
    // biome-ignore lint/correctness/noConstructorReturn: a stand-in until the real module lands
    return notBuilt<Public<JsonTail>>("jsonTail");
  }
} as unknown as new (
  db: PgDb,
) => Public<JsonTail>;
