import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isRunning } from "./process.js";

/** The test MCP server (the SDK's server side; stdio, or Streamable HTTP with --http). */
export const MCP_SERVER = join(import.meta.dirname, "../fixtures/mcp-server.mjs");

/**
 * The test MCP server's run log (its MCP_LOG): one line per real run of a
 * tool, "<tool> <pid> <note>". Each pid read is added to `seen`, for
 * killServers() after the test.
 */
export function mcpRuns(
  log: string,
  seen: Set<number>,
): { tool: string; pid: number; note: string }[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const [tool, pid, note = ""] = l.split(" ");
      seen.add(Number(pid));
      return { tool: tool!, pid: Number(pid), note };
    });
}

/** SIGKILL the server processes a test saw that still run (an afterEach). */
export function killServers(seen: Set<number>): void {
  for (const pid of seen) if (isRunning(pid)) process.kill(pid, "SIGKILL");
  seen.clear();
}
