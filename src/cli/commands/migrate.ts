import type { Command } from "commander";
import type { MigrateToReport } from "../../ops/migrate-to.js";
import { globals } from "../globals.js";
import { printJson } from "../output.js";
import { stepProgress } from "../progress.js";

// Loaded when the command runs, never by `hearth --help` or another command.
const migrateTo: typeof import("../../ops/migrate-to.js").migrateTo = async (...a) =>
  (await import("../../ops/migrate-to.js")).migrateTo(...a);

export function registerMigrate(program: Command): void {
  program
    .command("migrate")
    .description(
      "copy the store to another backend, verified: --to postgres://… from SQLite, or --to <state.db | home> from PostgreSQL",
    )
    .requiredOption(
      "--to <target>",
      "postgres://user@host/db (the password from PGPASSWORD, store.passwordFile or a prompt), or a new SQLite file (.db) or home directory",
    )
    .option("--from <url>", "the PostgreSQL source of a copy to SQLite (default: store.url)")
    .option(
      "--force",
      "PostgreSQL target only: empty its hearth tables first when it holds other rows",
    )
    .option(
      "--dry-run",
      "to PostgreSQL: hash the source (refusing what PostgreSQL cannot hold) and say whether the target would be copied fresh, resumed or refused; write nothing",
    )
    .option("--chunk-rows <n>", "rows per target transaction (default 1000)", (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1 || n > 100_000)
        throw new TypeError(
          `--chunk-rows must be a whole number from 1 to 100000, got ${JSON.stringify(v)}`,
        );
      return n;
    })
    .action(
      async (
        o: { to: string; from?: string; force?: boolean; dryRun?: boolean; chunkRows?: number },
        command: Command,
      ) => {
        const g = globals(command);
        const { terminalPrompt, warnPasswordOnCommandLine } = await import("../password.js");
        const warnings = warnPasswordOnCommandLine({ "--to": o.to, "--from": o.from }, g.json);
        const askPassword = terminalPrompt();
        const progress = stepProgress(g);
        const report = await migrateTo({
          home: g.home,
          profile: g.profile,
          to: o.to,
          from: o.from,
          force: o.force === true,
          dryRun: o.dryRun === true,
          ...(o.chunkRows === undefined ? {} : { chunkRows: o.chunkRows }),
          onProgress: progress.onProgress,
          ...(askPassword ? { askPassword } : {}),
        }).finally(() => progress.stop());
        if (g.json) printJson(warnings.length > 0 ? { ...report, warnings } : report);
        else process.stdout.write(render(report));
      },
    );
}

function render(r: MigrateToReport): string {
  if (r.dryRun)
    return `would copy ${r.source} -> ${r.target}: ${r.rows} rows in ${r.tables.length} tables, ${
      r.resumed
        ? "resuming an interrupted copy of this same source"
        : r.emptiedTarget
          ? "after emptying the target's hearth tables (--force)"
          : "into an empty target"
    }; nothing was written\n`;
  const lines = [
    `copied ${r.source} -> ${r.target}${r.resumed ? " (resumed an interrupted copy)" : ""}${r.emptiedTarget ? " (emptied the target first: --force)" : ""}`,
  ];
  const width = Math.max(...r.tables.map((t) => t.table.length));
  for (const t of r.tables)
    lines.push(
      `  ${t.table.padEnd(width)}  ${String(t.rows).padStart(9)} rows  sha256 ${t.sha256}`,
    );
  lines.push(
    `verified: counts and content hashes equal on both sides; ${r.rows} rows (${r.copied} written by this run) in ${r.durationMs} ms, ${r.rowsPerSecond} rows/s`,
  );
  return `${lines.join("\n")}\n`;
}
