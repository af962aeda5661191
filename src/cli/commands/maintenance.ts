import type { Command } from "commander";
import type { WindowReport } from "../../ops/window.js";
import type { Store } from "../../store/api.js";
import { type GlobalOptions, globals } from "../globals.js";
import { printJson } from "../output.js";
import { stepProgress } from "../progress.js";
import { confirm } from "./backup.js";

// Loaded when the command runs, never by `hearth --help` or another command.
const backend = () => import("../../ops/backend.js");
const repair: typeof import("../../ops/repair.js").repair = async (...a) =>
  (await import("../../ops/repair.js")).repair(...a);
const audited: typeof import("../../ops/audited.js").audited = async (...a) =>
  (await import("../../ops/audited.js")).audited(...a);
const withWindow: typeof import("../../ops/window.js").withWindow = async (...a) =>
  (await import("../../ops/window.js")).withWindow(...a);
const openStore: typeof import("../../store/open.js").openStore = async (...a) =>
  (await import("../../store/open.js")).openStore(...a);

const DAY = 24 * 60 * 60 * 1000;

/** A writer on the profile's existing store: maintenance never creates one (HEARTH_STORE_NOT_FOUND). */
function openWriter(g: GlobalOptions): Promise<Store> {
  return openStore({ home: g.home, profile: g.profile, role: "writer", create: false });
}

function mib(bytes: number): string {
  return `${(bytes / 1048576).toFixed(2)} MiB`;
}

function days(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0)
    throw new TypeError(`--older-than must be a number of days >= 0, got ${JSON.stringify(value)}`);
  return n;
}

/** `hearth sessions optimize | prune | delete-empty`: the commands that change the store. */
export function registerMaintenance(sessions: Command): void {
  sessions
    .command("optimize")
    .description(
      "FTS optimize, ANALYZE, VACUUM and WAL truncate (structural: refuses with exit 3 while another writer holds the store); on PostgreSQL VACUUM (ANALYZE) of hearth's tables",
    )
    .option("--dry-run", "take the gate and report, change nothing")
    .option(
      "--window",
      "run on a live system: park the gateway and other long-lived processes, optimize, resume them",
    )
    .action(async (o: { dryRun?: boolean; window?: boolean }, command: Command) => {
      const g = globals(command);
      const run = async (window: WindowReport | undefined) => {
        const { maintenanceTarget, optimizeStore } = await backend();
        const target = await maintenanceTarget(g);
        const progress = stepProgress(g);
        const result = await optimizeStore(target, {
          dryRun: o.dryRun === true,
          onProgress: progress.onProgress,
        }).finally(() => progress.stop());
        return { ...result, ...(window ? { window } : {}) };
      };
      const result = o.window ? await withWindow(g, "optimize", run) : await run(undefined);
      if (g.json) return printJson(result);
      for (const s of result.steps)
        process.stdout.write(
          `${s.done ? "done" : "skip"}  ${s.step}${s.note ? `  (${s.note})` : ""}\n`,
        );
      const wal =
        "backend" in result ? "" : ` (WAL ${mib(result.walBefore)} -> ${mib(result.walAfter)})`;
      process.stdout.write(`size: ${mib(result.sizeBefore)} -> ${mib(result.sizeAfter)}${wal}\n`);
      if (result.window)
        process.stdout.write(
          `window: ${result.window.parked.length} process(es) parked and resumed${result.window.parked.length ? ` (pids ${result.window.parked.join(", ")})` : ""}\n`,
        );
    });

  sessions
    .command("prune")
    .description(
      "delete ended sessions older than N days; compaction lineages go whole or not at all",
    )
    .option("--older-than <days>", "age of the session's end, in days", days, 90)
    .option("--include-pinned", "prune pinned sessions too")
    .option("--include-archived", "prune archived sessions too")
    .option("--dry-run", "list what would be deleted, delete nothing")
    .option("--yes", "do not ask for confirmation (required when stdin is not a terminal)")
    .action(
      async (
        o: {
          olderThan: number;
          includePinned?: boolean;
          includeArchived?: boolean;
          dryRun?: boolean;
          yes?: boolean;
        },
        command: Command,
      ) => {
        const g = globals(command);
        const store = await openWriter(g);
        try {
          const options = {
            olderThanMs: o.olderThan * DAY,
            includePinned: o.includePinned === true,
            includeArchived: o.includeArchived === true,
          };
          const preview = await store.sessions.prune({ ...options, dryRun: true });
          if (!o.dryRun && preview.sessions.length > 0 && !o.yes) {
            await confirm(
              `delete ${preview.sessions.length} session(s) in ${preview.lineages} lineage(s) and all their messages?`,
            );
          }
          const result = o.dryRun ? preview : await store.sessions.prune(options);
          if (g.json) return printJson({ dryRun: o.dryRun === true, ...result });
          const verb = o.dryRun ? "would delete" : "deleted";
          process.stdout.write(
            `${verb} ${result.sessions.length} session(s) in ${result.lineages} lineage(s); kept ${result.keptLineages} lineage(s) with a live, recent, pinned or archived member\n`,
          );
          if (!o.dryRun && result.sessions.length > 0)
            process.stdout.write("space is reclaimed by: hearth sessions optimize\n");
        } finally {
          await store.close();
        }
      },
    );

  sessions
    .command("delete-empty")
    .description(
      "delete sessions with no message rows at all (history counts as messages); pinned ones are kept",
    )
    .option("--older-than <days>", "only sessions idle this long, in days", days, 0)
    .option("--dry-run", "list them, delete nothing")
    .action(async (o: { olderThan: number; dryRun?: boolean }, command: Command) => {
      const g = globals(command);
      const store = await openWriter(g);
      try {
        const ids = await store.sessions.deleteEmpty({
          olderThanMs: o.olderThan * DAY,
          dryRun: o.dryRun === true,
        });
        if (g.json) return printJson({ dryRun: o.dryRun === true, sessions: ids });
        process.stdout.write(
          `${o.dryRun ? "would delete" : "deleted"} ${ids.length} empty session(s)\n`,
        );
        for (const id of ids) process.stdout.write(`  ${id}\n`);
      } finally {
        await store.close();
      }
    });

  sessions
    .command("repair")
    .description(
      "repair a damaged store offline (forensic copy first; index rebuild, REINDEX, then salvage); refuses with exit 3 while any process holds it",
    )
    .option("--dry-run", "diagnose on a snapshot and say what would be done, change nothing")
    .option("--window", "run on a live system: park the long-lived processes, repair, resume them")
    .action(async (o: { dryRun?: boolean; window?: boolean }, command: Command) => {
      const g = globals(command);
      const progress = stepProgress(g);
      const run = async (window?: WindowReport) => ({
        ...(await repair({
          home: g.home,
          profile: g.profile,
          dryRun: o.dryRun === true,
          onProgress: progress.onProgress,
        })),
        ...(window ? { window } : {}),
      });
      const act = () => (o.window ? withWindow(g, "repair", run) : run());
      const result = await (o.dryRun
        ? act()
        : // A healthy store's repair does nothing and records nothing.
          audited(g, { action: "store.repair" }, act, (r) =>
            r.strategy === "none"
              ? false
              : {
                  strategy: r.strategy,
                  ...(r.forensicCopy ? { forensicCopy: r.forensicCopy } : {}),
                },
          )
      ).finally(() => progress.stop());
      if (g.json) return printJson(result);
      const damage = [
        ...result.before.canonical,
        ...(result.before.fts ? [`search index: ${result.before.fts}`] : []),
      ];
      if (result.strategy === "none") {
        process.stdout.write(`${result.path} is healthy: nothing to repair\n`);
        return;
      }
      process.stdout.write(`damage: ${damage.slice(0, 5).join("; ")}\n`);
      process.stdout.write(
        `${result.dryRun ? "would try" : "repaired with"}: ${result.strategy}${result.salvaged ? ` (${result.salvaged.sessions} sessions, ${result.salvaged.messages} messages kept)` : ""}\n`,
      );
      if (result.forensicCopy)
        process.stdout.write(`the damaged store is kept in ${result.forensicCopy}\n`);
    });
}
