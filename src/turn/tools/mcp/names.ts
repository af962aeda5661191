import { createHash } from "node:crypto";

/** Between a server's name and its tool's in the name the model sees. */
export const SEPARATOR = "__";

/**
 * The name the model sees for `tool` of `server`: `<server>__<tool>`, which
 * no built-in or module tool can take (the registry refuses one that would).
 * A tool name outside the model API's alphabet (`[a-zA-Z0-9_-]`, at most 64)
 * has the other characters replaced by `_`, and a name too long is cut and
 * given a short hash of the original, so two tools never share a name.
 */
export function exposedName(server: string, tool: string): string {
  const clean = tool.replace(/[^a-zA-Z0-9_-]/g, "_");
  const full = `${server}${SEPARATOR}${clean}`;
  if (full.length <= 64 && clean === tool) return full;
  const hash = createHash("sha256").update(tool).digest("hex").slice(0, 8);
  return `${full.slice(0, 64 - 9)}_${hash}`;
}

/** The server a tool name belongs to, among `servers`, or undefined. */
export function serverOf(name: string, servers: Iterable<string>): string | undefined {
  for (const server of servers) if (name.startsWith(`${server}${SEPARATOR}`)) return server;
  return undefined;
}
