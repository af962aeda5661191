import type { Command } from "commander";
import { HearthError } from "../../errors.js";
import type { ImportReport } from "../../import/run.js";
import type { SourceKind } from "../../import/source.js";
import { globals } from "../globals.js";
import { printJson } from "../output.js";
import { printable } from "../printable.js";
import { stepProgress } from "../progress.js";

// Loaded when the command runs, never by `hearth --help` or another command.
const importInto: typeof import("../../import/import.js").importInto = async (...a) =>
  (await import("../../import/import.js")).importInto(...a);

export function registerImport(program: Command): void {
  const cmd = program
    .command("import")
    .description("bring another agent runtime's history into this profile, read-only, verified");
  subcommand(
    cmd,
    "hermes",
    "<state.db>",
    "import a Hermes Agent state.db (schema 17 to 30) from a consistent snapshot; a rerun imports only what is new",
  );
  subcommand(
    cmd,
    "openclaw",
    "<state-dir>",
    "import an OpenClaw state dir (sessions.json and one JSONL transcript per session); a rerun imports only what is new",
  );
}

function subcommand(cmd: Command, kind: SourceKind, arg: string, description: string): void {
  cmd
    .command(`${kind} ${arg}`)
    .description(description)
    .option("--dry-run", "say what would come over and what has no home; write nothing")
    .option("--no-verify", "skip the verification pass (counts and content hashes per session)")
    .option("--batch <n>", "messages per transaction (default 1000)", (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1 || n > 10_000)
        throw new TypeError(
          `--batch must be a whole number from 1 to 10000, got ${JSON.stringify(v)}`,
        );
      return n;
    })
    .action(
      async (
        path: string,
        o: { dryRun?: boolean; verify?: boolean; batch?: number },
        command: Command,
      ) => {
        const g = globals(command);
        const progress = stepProgress(g);
        const report = await importInto({
          kind,
          path,
          home: g.home,
          profile: g.profile,
          dryRun: o.dryRun === true,
          verify: o.verify !== false,
          ...(o.batch === undefined ? {} : { batch: o.batch }),
          onProgress: progress.onProgress,
        }).finally(() => progress.stop());
        if (g.json) printJson(report);
        else process.stdout.write(render(report));
        if (report.verify && !report.verify.ok) {
          throw new HearthError(
            "HEARTH_IMPORT_MISMATCH",
            `verification failed: ${report.verify.differing} of ${report.verify.sessions} sessions differ between ${path} and hearth`,
            {
              resource: path,
              hint: "run the import again (it writes what is missing); a session the source changed in place stays different, see docs/import.md",
              details: { differences: report.verify.differences },
            },
          );
        }
      },
    );
}

function render(r: ImportReport): string {
  const lines = [
    `${r.dryRun ? "would import" : "imported"} ${printable(r.source)} (${r.kind}${r.schemaVersion === null ? "" : ` schema ${r.schemaVersion}`}, ${r.snapshot === "files" ? "files read" : `${r.snapshot} snapshot`})`,
    `  sessions  ${r.sessions.seen} seen, ${r.sessions.created} ${r.dryRun ? "new" : "created"}, ${r.sessions.existing} already here${r.sessions.titlesRenamed ? `, ${r.sessions.titlesRenamed} titles renamed (taken)` : ""}`,
    `  messages  ${r.messages.seen} seen, ${r.messages.inserted} ${r.dryRun ? "new" : "written"}, ${r.messages.skipped} already here${r.messages.restated ? `, ${r.messages.restated} archived state updated` : ""}`,
  ];
  const noHome = Object.entries(r.noHome);
  if (noHome.length > 0) {
    lines.push("  no home in hearth (kept out, counted):");
    for (const [kind, n] of noHome) lines.push(`    ${String(n).padStart(9)}  ${printable(kind)}`);
  }
  for (const p of r.problems) lines.push(`  skipped: ${printable(p)}`);
  if (r.verify)
    lines.push(
      r.verify.ok
        ? `verified: ${r.verify.sessions} sessions, ${r.verify.messages} messages, counts and content hashes equal`
        : `verification FAILED: ${r.verify.differing} sessions differ (--json lists them)`,
    );
  if (!r.dryRun)
    lines.push(`${r.messages.seen} messages in ${r.durationMs} ms (${r.messagesPerSecond}/s)`);
  return `${lines.join("\n")}\n`;
}
