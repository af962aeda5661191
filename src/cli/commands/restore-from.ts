import type { Command } from "commander";
import { HearthError } from "../../errors.js";
import { globals } from "../globals.js";
import { printJson } from "../output.js";
import { confirm } from "./backup.js";

export interface RestoreOptions {
  yes?: boolean;
  dryRun?: boolean;
  window?: boolean;
  force?: boolean;
  from?: string;
  at?: string;
  into?: string;
}

/** `hearth restore --from <target> [--at <time>] [--into <home>]` (docs/cli.md#restore). */
export async function restoreFrom(
  file: string | undefined,
  o: RestoreOptions,
  command: Command,
): Promise<void> {
  if (file !== undefined || o.from === undefined)
    throw new HearthError(
      "HEARTH_USAGE",
      "restore takes a backup file or --from <target>, not both",
      {
        hint: "hearth restore <file>   or   hearth restore --from <target> [--at <time>] [--into <home>]",
      },
    );
  if (o.dryRun || o.force)
    throw new HearthError("HEARTH_USAGE", "--dry-run and --force do not apply to --from", {});
  const g = globals(command);
  const { maintenanceTarget, restoreStore } = await import("../../ops/backend.js");
  const { parseAt, restoreFromTarget } = await import("../../ops/replicate/restore-cli.js");
  const target = await maintenanceTarget(g);
  if (target.backend !== "sqlite")
    throw new HearthError(
      "HEARTH_UNSUPPORTED_BACKEND",
      "replicas are of SQLite stores; PostgreSQL restores to a point in time with its own WAL archive",
      { hint: "docs/postgres.md#point-in-time-recovery" },
    );
  const from = o.from;
  const result = await restoreFromTarget({
    home: target.home,
    profile: target.profile,
    from,
    at: o.at === undefined ? undefined : parseAt(o.at),
    into: o.into,
    replace: async (built) => {
      if (!o.yes)
        await confirm(`replace the store of profile ${target.profile} with ${from}'s replica?`);
      return restoreStore(target, {
        from: built,
        dryRun: false,
        window: o.window === true,
        force: false,
      });
    },
  });
  if (g.json) return printJson(result);
  process.stdout.write(
    `restored ${o.into === undefined ? "the store" : result.path} from ${from} as of ${new Date(result.through).toISOString()} (generation ${result.generation}, ${result.segments} WAL segments; verified: integrity_check ok, ${result.counts.sessions} sessions, ${result.counts.messages} messages)\n`,
  );
  for (const key of result.skipped)
    process.stdout.write(
      `skipped ${key}: it does not match its checksum (a half-written object); its twin from the same frame was used\n`,
    );
}
