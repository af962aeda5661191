import type { Command } from "commander";
import { resolveLocation } from "../../config/paths.js";
import { globals } from "../globals.js";
import { reportStartupError } from "../output.js";

// Loaded when the command runs, never by `hearth --help` or another command.
const runAcp: typeof import("../../acp/main.js").runAcp = async (...a) =>
  (await import("../../acp/main.js")).runAcp(...a);

const bytes = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1024)
    throw new TypeError(`expected a byte count of at least 1024, got ${JSON.stringify(v)}`);
  return n;
};

/**
 * `hearth acp`: serve the Agent Client Protocol on stdin/stdout for a code
 * editor (docs/acp.md). stdout carries only protocol messages; logs are
 * JSON lines on stderr. Runs until the editor closes stdin.
 */
export function registerAcp(program: Command, setExit: (code: number) => void): void {
  program
    .command("acp")
    .description("serve the Agent Client Protocol on stdio, for code editors (docs/acp.md)")
    .option(
      "--max-message-bytes <n>",
      "refuse stdin messages longer than this with a JSON-RPC error",
      bytes,
      8 * 1024 * 1024,
    )
    .action(async (o: { maxMessageBytes: number }, command: Command) => {
      const g = globals(command);
      try {
        const { reason } = await runAcp({
          home: g.home,
          profile: resolveLocation(g).profile,
          maxMessageBytes: o.maxMessageBytes,
        });
        if (reason === "connection failed") setExit(1);
      } catch (err) {
        // Errors are printed on stderr (reportError), never on the protocol stream.
        setExit(reportStartupError(err, { json: g.json }));
      }
    });
}
