#!/usr/bin/env node
import { Command, CommanderError, Option } from "commander";
import { setProcessKind } from "../process/kind.js";
import { registerAcp } from "./commands/acp.js";
import { registerAudit } from "./commands/audit.js";
import { registerBackup } from "./commands/backup.js";
import { registerChat } from "./commands/chat.js";
import { registerControl } from "./commands/control.js";
import { registerCron } from "./commands/cron.js";
import { registerDashboard } from "./commands/dashboard.js";
import { registerDoctor } from "./commands/doctor.js";
import { registerGateway } from "./commands/gateway.js";
import { registerImport } from "./commands/import.js";
import { registerMaintenance } from "./commands/maintenance.js";
import { registerMigrate } from "./commands/migrate.js";
import { registerPs } from "./commands/ps.js";
import { registerScheduler } from "./commands/scheduler.js";
import { registerService } from "./commands/service.js";
import { registerSessions } from "./commands/sessions.js";
import { registerStart } from "./commands/start.js";
import { registerToken } from "./commands/token.js";
import { registerWorker } from "./commands/worker.js";
import { EXIT, reportError } from "./output.js";

async function main(argv: string[]): Promise<number> {
  // Presence locks carry the kind; an explicit $HEARTH_PROCESS_KIND (a worker) wins.
  if (!process.env.HEARTH_PROCESS_KIND) setProcessKind("cli");
  let exitCode: number = EXIT.ok;
  const program = new Command()
    .name("hearth")
    .description("hearth: the state home for long-running AI agents")
    .option("--home <dir>", "hearth home (default: $HEARTH_HOME or ~/.hearth)")
    .option("--profile <name>", "profile (default: $HEARTH_PROFILE or default)")
    .option("--json", "machine-readable output (a documented contract)")
    .addOption(
      new Option(
        "--progress <mode>",
        "progress of backup, restore, optimize and repair: a bar on a terminal (auto), one JSON line per step on stderr (json), or none",
      )
        .choices(["auto", "json", "none"])
        .default("auto"),
    )
    .exitOverride()
    .showSuggestionAfterError(true);
  registerDoctor(program, (code) => {
    exitCode = code;
  });
  registerMaintenance(registerSessions(program));
  registerPs(program);
  registerGateway(program, (code) => {
    exitCode = code;
  });
  registerDashboard(program, (code) => {
    exitCode = code;
  });
  registerBackup(program);
  registerMigrate(program);
  registerImport(program);
  registerAcp(program, (code) => {
    exitCode = code;
  });
  registerToken(program);
  registerAudit(program);
  registerChat(program, (code) => {
    exitCode = code;
  });
  registerWorker(program, (code) => {
    exitCode = code;
  });
  registerScheduler(program, (code) => {
    exitCode = code;
  });
  registerCron(program, (code) => {
    exitCode = code;
  });
  registerStart(program, (code) => {
    exitCode = code;
  });
  registerControl(program, (code) => {
    exitCode = code;
  });
  registerService(program, (code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync(argv);
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit 0; every other parse problem is a usage error.
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    return reportError(err, { json: argv.includes("--json") });
  }
}

// A closed pipe (`hearth sessions export | head`) is the reader's choice, not an error.
process.stdout.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code === "EPIPE") process.exit(process.exitCode ?? EXIT.ok);
  throw err;
});

// No top-level await: the CLI is bundled as CommonJS (scripts/bundle-cli.mjs).
main(process.argv).then((code) => {
  process.exitCode = code;
});
