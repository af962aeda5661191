/**
 * `hearth sessions optimize` on a PostgreSQL profile: VACUUM (ANALYZE) of
 * each of hearth's tables, beside the live processes (PostgreSQL needs no
 * gate or maintenance window for it: it takes no lock that blocks reads or
 * writes). The report has the SQLite optimize's shape (OptimizeResult), the
 * database size standing for the file's and no WAL figures.
 */
import { createPool, fromPgError, maskUrl } from "../../store/pg/pool.js";
import { PG_TABLES } from "../../store/pg/schema.js";
import type { OnProgress } from "../../store/progress.js";
import type { OptimizeResult } from "../optimize.js";
import { phases } from "../phases.js";

export interface PgOptimizeResult extends OptimizeResult {
  backend: "postgres";
}

export async function optimizePg(options: {
  url: string;
  dryRun?: boolean;
  onProgress?: OnProgress;
}): Promise<PgOptimizeResult> {
  const { url } = options;
  const steps = PG_TABLES.map((t) => `vacuum analyze ${t}`);
  const pool = createPool(url, { max: 1, kind: "cli" });
  try {
    const size = async () => {
      const { rows } = await pool.query("SELECT pg_database_size(current_database()) AS bytes");
      return Number(rows[0]?.bytes);
    };
    const before = await size();
    const result: PgOptimizeResult = {
      backend: "postgres",
      path: maskUrl(url),
      dryRun: options.dryRun === true,
      sizeBefore: before,
      sizeAfter: before,
      walBefore: 0,
      walAfter: 0,
      steps: [],
    };
    if (options.dryRun) {
      result.steps = steps.map((step) => ({ step, done: false, note: "dry run" }));
      return result;
    }
    const progress = phases("optimize", steps, options.onProgress);
    for (const [i, table] of PG_TABLES.entries()) {
      progress.start(steps[i]!);
      // A table name of hearth's own schema (PG_TABLES), never input.
      await pool.query(`VACUUM (ANALYZE) ${table}`);
      result.steps.push({ step: steps[i]!, done: true });
    }
    progress.done();
    result.sizeAfter = await size();
    return result;
  } catch (err) {
    throw fromPgError(err, url, "vacuum and analyze hearth's tables");
  } finally {
    await pool.end();
  }
}
