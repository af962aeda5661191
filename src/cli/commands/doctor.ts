import type { Command } from "commander";
import type { Severity } from "../../ops/doctor.js";
import { type GlobalOptions, globals } from "../globals.js";
import { EXIT, printJson } from "../output.js";

// Loaded when the command runs, never by `hearth --help` or another command.
const runDoctor: typeof import("../../ops/doctor.js").runDoctor = async (...a) =>
  (await import("../../ops/doctor.js")).runDoctor(...a);
const runDoctorFix: typeof import("../../ops/doctor/fix.js").runDoctorFix = async (...a) =>
  (await import("../../ops/doctor/fix.js")).runDoctorFix(...a);

const MARK: Record<Severity, string> = { ok: "ok  ", info: "info", warning: "WARN", error: "FAIL" };

export function registerDoctor(program: Command, setExit: (code: number) => void): void {
  program
    .command("doctor")
    .description("diagnose a profile's store without changing anything")
    .option(
      "--fix",
      "apply the fixes whose preconditions are proven; refuse the others, saying why",
    )
    .action(async (o: { fix?: boolean }, command: Command) => {
      const g: GlobalOptions = globals(command);
      const target = await (await import("../../ops/backend.js")).maintenanceTarget(g);
      if (target.backend === "postgres") {
        if (o.fix)
          throw new TypeError(
            "doctor --fix repairs SQLite files; on PostgreSQL act on the findings (their fix lines say how)",
          );
        const { runPgDoctor } = await import("../../ops/pg/doctor.js");
        const report = await runPgDoctor(target);
        if (g.json) printJson(report);
        else {
          process.stdout.write(
            `hearth doctor: ${report.url} (profile ${report.profile}, PostgreSQL)\n`,
          );
          for (const f of report.findings) {
            process.stdout.write(`  ${MARK[f.severity]}  ${f.message}\n`);
            if (f.fix && f.severity !== "ok") process.stdout.write(`        fix: ${f.fix}\n`);
          }
          process.stdout.write(`status: ${report.status}\n`);
        }
        setExit(report.status === "warning" || report.status === "error" ? EXIT.problems : EXIT.ok);
        return;
      }
      if (o.fix) {
        const fixed = await runDoctorFix({ home: g.home, profile: g.profile });
        if (g.json) printJson(fixed);
        else
          for (const a of fixed.actions)
            process.stdout.write(`${a.outcome.padEnd(7)}  ${a.code}: ${a.detail}\n`);
        const refused = fixed.actions.some((a) => a.outcome === "refused");
        const after = fixed.after.status;
        setExit(
          refused
            ? EXIT.refused
            : after === "warning" || after === "error"
              ? EXIT.problems
              : EXIT.ok,
        );
        if (!g.json) process.stdout.write(`status after fixes: ${after}\n`);
        return;
      }
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
