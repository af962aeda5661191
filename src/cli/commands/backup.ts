import type { Command } from "commander";
import { HearthError } from "../../errors.js";
import { globals } from "../globals.js";
import { printJson } from "../output.js";
import { stepProgress } from "../progress.js";

// Loaded when the command runs, never by `hearth --help` or another command.
const maintenanceTarget: typeof import("../../ops/backend.js").maintenanceTarget = async (...a) =>
  (await import("../../ops/backend.js")).maintenanceTarget(...a);
const backupStore: typeof import("../../ops/backend.js").backupStore = async (...a) =>
  (await import("../../ops/backend.js")).backupStore(...a);
const audited: typeof import("../../ops/audited.js").audited = async (...a) =>
  (await import("../../ops/audited.js")).audited(...a);
const restoreStore: typeof import("../../ops/backend.js").restoreStore = async (...a) =>
  (await import("../../ops/backend.js")).restoreStore(...a);

export function registerBackup(program: Command): void {
  program
    .command("backup")
    .description("a consistent, verified copy of the store while it is in use (online backup)")
    .option("--keep <n>", "backups of this profile to keep (default: backup.keep, 7)", (v) =>
      positive(v, "--keep"),
    )
    .option("--dry-run", "check space and print the target, write nothing")
    .option(
      "--to <target>",
      "also copy the backup to this backup.targets entry, read back and compared",
    )
    .action(async (o: { keep?: number; dryRun?: boolean; to?: string }, command: Command) => {
      const g = globals(command);
      const target = await maintenanceTarget(g);
      const progress = stepProgress(g);
      const result = await backupStore(target, {
        onProgress: progress.onProgress,
        dryRun: o.dryRun === true,
        ...(o.keep === undefined ? {} : { keep: o.keep }),
      }).finally(() => progress.stop());
      const copied =
        o.to === undefined || result.dryRun
          ? undefined
          : await copyBackupToTarget({ ...target, file: result.path, to: o.to });
      if (g.json) return printJson(copied ? { ...result, copied } : result);
      const pg = "entries" in result ? result : undefined;
      if (result.dryRun)
        process.stdout.write(
          `would write ${result.path} (${pg ? "database " : ""}about ${result.bytes} bytes)\n`,
        );
      else {
        process.stdout.write(
          pg
            ? `backup: ${result.path} (pg_dump custom format, ${result.bytes} bytes, ${pg.entries} entries verified, ${result.durationMs} ms)\n`
            : `backup: ${result.path} (${result.bytes} bytes, verified, ${result.durationMs} ms)\n`,
        );
        for (const old of result.removed) process.stdout.write(`removed old backup ${old}\n`);
        if (copied)
          process.stdout.write(
            `copied to ${copied.target} as ${copied.key} (sha256 ${copied.sha256}, read back and compared)\n`,
          );
      }
    });

  program
    .command("restore [file]")
    .description(
      "replace the store with a backup (offline: refuses with exit 3 while any process holds it), or rebuild it from a replica (--from)",
    )
    .option(
      "--from <target>",
      "a backup.targets name: rebuild from its replica (docs/operations.md)",
    )
    .option("--at <time>", "with --from: as of this time (ISO 8601 with zone, or epoch ms)")
    .option("--into <home>", "with --from: into this new, empty home instead of over the store")
    .option("--yes", "do not ask for confirmation (required when stdin is not a terminal)")
    .option("--dry-run", "check the backup, the holders and the space, change nothing")
    .option("--window", "run on a live system: park the long-lived processes, restore, resume them")
    .option(
      "--force",
      "PostgreSQL (store.url): replace a database that holds tables (its content is dumped to backups/forensic/ first)",
    )
    .action(async (file: string | undefined, o: RestoreOptions, command: Command) => {
      const g = globals(command);
      if (o.from !== undefined || file === undefined) return restoreFrom(file, o, command);
      const target = await maintenanceTarget(g);
      const progress = stepProgress(g);
      const run = () =>
        restoreStore(target, {
          from: file,
          dryRun: o.dryRun === true,
          window: o.window === true,
          force: o.force === true,
          onProgress: progress.onProgress,
          ...(o.dryRun || o.yes
            ? {}
            : { confirm: (replacing: string) => confirm(`replace ${replacing} with ${file}?`) }),
        });
      // The restored store's trail is the backup's, then this restore (docs/security.md#audit-trail).
      const result = await (o.dryRun
        ? run()
        : audited(g, { action: "store.restore", detail: { from: file } }, run)
      ).finally(() => progress.stop());
      if (g.json) return printJson(result);
      if (result.dryRun) {
        process.stdout.write(`would restore ${result.path} from ${file}\n`);
        return;
      }
      const pg = "backend" in result && result.backend === "postgres" ? result : undefined;
      process.stdout.write(
        pg
          ? `restored ${result.path} from ${file} (schema ${pg.schemaVersion}, ${pg.counts.sessions} sessions, ${pg.counts.messages} messages)\n`
          : `restored ${result.path} from ${file} (verified)\n`,
      );
      if (result.forensicCopy)
        process.stdout.write(
          `the replaced ${pg ? "database" : "store"} is kept in ${result.forensicCopy}\n`,
        );
    });
}

type RestoreOptions = import("./restore-from.js").RestoreOptions;

const restoreFrom: typeof import("./restore-from.js").restoreFrom = async (...a) =>
  (await import("./restore-from.js")).restoreFrom(...a);

const copyBackupToTarget: typeof import("../../ops/replicate/copy-backup.js").copyBackupToTarget =
  async (...a) => (await import("../../ops/replicate/copy-backup.js")).copyBackupToTarget(...a);

function positive(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new TypeError(`${flag} must be a whole number >= 1, got ${JSON.stringify(value)}`);
  return n;
}

/** Ask on a terminal; refuse without one (cron and pipes must say --yes). */
export async function confirm(question: string): Promise<void> {
  if (!process.stdin.isTTY) {
    throw new HearthError("HEARTH_USAGE", `${question} Refusing without a terminal to ask on`, {
      hint: "pass --yes to confirm (or --dry-run to check first)",
    });
  }
  const { createInterface } = await import("node:readline/promises");
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  const answer = await rl.question(`${question} [y/N] `);
  rl.close();
  if (!/^y(es)?$/i.test(answer.trim())) {
    throw new HearthError("HEARTH_USAGE", "not confirmed; nothing was changed", {
      hint: "answer y, or pass --yes",
    });
  }
}
