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
  return `${full.slice(0, 64 - 9)}_${fnv1a(tool)}`;
}

/** FNV-1a, 32 bits, as 8 hex digits: enough to tell names apart, and no node:crypto to load. */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(text, "utf8")) h = Math.imul(h ^ byte, 0x01000193) >>> 0;
  return h.toString(16).padStart(8, "0");
}

/** The server a tool name belongs to, among `servers`, or undefined. */
export function serverOf(name: string, servers: Iterable<string>): string | undefined {
  for (const server of servers) if (name.startsWith(`${server}${SEPARATOR}`)) return server;
  return undefined;
}
