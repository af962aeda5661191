import type { Command } from "commander";
import { runDoctor, type Severity } from "../../ops/doctor.js";
import { type GlobalOptions, globals } from "../globals.js";
import { EXIT, printJson } from "../output.js";

const MARK: Record<Severity, string> = { ok: "ok  ", info: "info", warning: "WARN", error: "FAIL" };

export function registerDoctor(program: Command, setExit: (code: number) => void): void {
  program
    .command("doctor")
    .description("diagnose a profile's store without changing anything")
    .action(async (_options: unknown, command: Command) => {
      const g: GlobalOptions = globals(command);
      const report = await runDoctor({ home: g.home, profile: g.profile });
      if (g.json) printJson(report);
      else {
        process.stdout.write(`hearth doctor: ${report.path} (profile ${report.profile})\n`);
        for (const f of report.findings) {
          process.stdout.write(`  ${MARK[f.severity]}  ${f.message}\n`);
          if (f.fix && f.severity !== "ok") process.stdout.write(`        fix: ${f.fix}\n`);
        }
        if (report.counts) {
          const c = report.counts;
          process.stdout.write(
            `  sessions: ${c.sessions}, messages: ${c.messages} (${c.activeMessages} live, ${c.archivedMessages} history)\n`,
          );
        }
        process.stdout.write(`status: ${report.status}\n`);
      }
      setExit(report.status === "warning" || report.status === "error" ? EXIT.problems : EXIT.ok);
    });
}
