/**
 * Shared by the PostgreSQL ops tests: a SQLite home filled with every kind
 * of row, copied to a fresh database with `hearth migrate --to`, and a
 * home whose config points store.url at a database.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { expect } from "vitest";
import { openStore } from "../../../src/index.js";
import { PG_TABLES } from "../../../src/store/pg/schema.js";
import { runCli } from "../../helpers/cli.js";
import { tempHome } from "../../helpers/home.js";
import { freshPgDatabase } from "../../helpers/pg.js";
import { fillStore } from "./fill-store.js";

export const cliEnv = { HEARTH_FAILPOINTS: "" };

/** A new database holding a copy of a store filled with every kind of row. */
export async function filledDatabase(): Promise<string> {
  const home = tempHome();
  const store = await openStore({ home, env: {} });
  await fillStore(store);
  await store.close();
  const url = await freshPgDatabase();
  const copied = await runCli(["migrate", "--to", url], { home, env: cliEnv });
  expect(copied.code).toBe(0);
  return url;
}

/** A home whose config.json sets store.url. */
export function pgHome(url: string): string {
  const home = tempHome();
  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeFileSync(join(home, "config.json"), JSON.stringify({ store: { url } }), { mode: 0o600 });
  return home;
}

/** Every row of every hearth table, in a stable order (for before/after comparisons). */
export async function pgContent(url: string): Promise<Record<string, unknown[]>> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const out: Record<string, unknown[]> = {};
    for (const t of PG_TABLES) {
      const cols = (
        await c.query(
          `SELECT column_name FROM information_schema.columns WHERE table_name = $1 AND is_generated = 'NEVER' ORDER BY ordinal_position`,
          [t],
        )
      ).rows.map((r) => r.column_name);
      out[t] = (
        await c.query(
          `SELECT ${cols.join(", ")} FROM ${t} ORDER BY ${cols.map((x) => `${x}::text COLLATE "C"`).join(", ")}`,
        )
      ).rows;
    }
    return out;
  } finally {
    await c.end();
  }
}
