import { lstatSync } from "node:fs";
import { type Store, sqliteOnly } from "../store/api.js";
import type { OnProgress } from "../store/progress.js";
import { phases } from "./phases.js";

export interface OptimizeResult {
  path: string;
  dryRun: boolean;
  /** Database plus WAL, in bytes. */
  sizeBefore: number;
  sizeAfter: number;
  walBefore: number;
  walAfter: number;
  steps: { step: string; done: boolean; note?: string }[];
}

const STEPS = ["fts optimize", "analyze", "vacuum", "wal truncate"] as const;

/**
 * FTS optimize, ANALYZE, VACUUM and a WAL truncate: structural (P4), so it
 * runs under the exclusive gate and refuses (HEARTH_STORE_HELD, exit 3)
 * while any other writer lives. Hearth readers may stay; when one keeps the
 * WAL pinned the truncate is reported as not done rather than waited for.
 */
export async function optimize(
  anyStore: Store,
  options: { dryRun?: boolean; onProgress?: OnProgress } = {},
): Promise<OptimizeResult> {
  const store = sqliteOnly(anyStore, "hearth sessions optimize");
  const before = sizes(store.path);
  const result: OptimizeResult = {
    path: store.path,
    dryRun: options.dryRun === true,
    sizeBefore: before.total,
    sizeAfter: before.total,
    walBefore: before.wal,
    walAfter: before.wal,
    steps: [],
  };
  await store.withStructuralGate("optimize", (ctx) => {
    if (options.dryRun) {
      result.steps = STEPS.map((step) => ({ step, done: false, note: "dry run" }));
      return;
    }
    const progress = phases("optimize", STEPS, options.onProgress);
    const run = (step: (typeof STEPS)[number], fn: () => string | undefined) => {
      progress.start(step);
      const note = fn();
      result.steps.push({ step, done: note === undefined, ...(note ? { note } : {}) });
    };
    run("fts optimize", () => {
      ctx.optimizeSearchIndex();
      return undefined;
    });
    run("analyze", () => {
      ctx.analyze();
      return undefined;
    });
    run("vacuum", () => {
      ctx.vacuum();
      return undefined;
    });
    run("wal truncate", () => {
      const outcome = ctx.truncateWal();
      if (outcome === "no-wal") return "not in WAL mode";
      if (outcome === "busy") {
        const readers = ctx.readers.map((r) => r.pid).join(", ");
        return `a reader still uses the WAL${readers ? ` (pids ${readers})` : ""}; it is truncated by the next optimize`;
      }
      return undefined;
    });
    progress.done();
  });
  const after = sizes(store.path);
  result.sizeAfter = after.total;
  result.walAfter = after.wal;
  return result;
}

function sizes(path: string): { total: number; wal: number } {
  const size = (p: string) => {
    try {
      return lstatSync(p).size;
    } catch {
      return 0;
    }
  };
  const wal = size(`${path}-wal`);
  return { total: size(path) + wal, wal };
}
