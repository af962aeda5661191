import { userInfo } from "node:os";
import type { Command } from "commander";
import { resolveHome } from "../../config/paths.js";
import { builtFile } from "../../files/built.js";
import { globals } from "../globals.js";
import { EXIT, printJson, reportError } from "../output.js";

/** `hearth service install --user|--system [--dry-run]`: the systemd unit of hearth start. */
export function registerService(program: Command, setExit: (code: number) => void): void {
  program
    .command("service")
    .description("the systemd unit that runs hearth start")
    .command("install")
    .description("write hearth.service (LimitNOFILE, exit 78 not restarted); never enables it")
    .option("--user", "a user unit (~/.config/systemd/user)")
    .option("--system", "a system unit (/etc/systemd/system), run as --run-as or the current user")
    .option("--run-as <user>", "the User= of a system unit")
    .option("--unit-dir <dir>", "write it here instead ($HEARTH_SYSTEMD_DIR)")
    .option("--force", "replace a different unit already there")
    .option("--dry-run", "print the unit, write nothing")
    .action(
      async (
        o: {
          user?: boolean;
          system?: boolean;
          runAs?: string;
          unitDir?: string;
          force?: boolean;
          dryRun?: boolean;
        },
        command: Command,
      ) => {
        const g = globals(command);
        try {
          if (o.user === o.system) throw new RangeError("pass exactly one of --user and --system");
          const { installUnit } = await import("../../ops/service-unit.js");
          const report = installUnit({
            scope: o.system ? "system" : "user",
            node: process.execPath,
            cli: builtFile("cli/main.js"),
            home: resolveHome(g.home),
            user: o.runAs ?? userInfo().username,
            ...(o.unitDir ? { dir: o.unitDir } : {}),
            dryRun: o.dryRun === true,
            force: o.force === true,
          });
          if (g.json) printJson(report);
          else if (report.result === "dry-run") process.stdout.write(report.unit);
          else
            process.stdout.write(
              `${report.result === "written" ? "wrote" : "unchanged:"} ${report.path}\nthen: ${report.next.join(" && ")}\n`,
            );
          setExit(EXIT.ok);
        } catch (err) {
          setExit(reportError(err, { json: g.json }));
        }
      },
    );
}
