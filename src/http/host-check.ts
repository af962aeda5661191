import { isIP } from "node:net";
import { networkInterfaces } from "node:os";
import { HearthError } from "../errors.js";

/**
 * Which `Host` (and `Origin`) a hearth HTTP server answers for (S1). A web
 * page can rebind its own name to 127.0.0.1 (DNS rebinding): the browser then
 * sends the page's name in `Host`, so a server that answers any Host serves
 * that page. hearth answers only loopback names, the address it is bound to
 * (every local interface address when bound to a wildcard), and the names
 * the operator lists in `allowedHosts`. The gateway and the dashboard share
 * this policy.
 */
export interface HostPolicy {
  /** Lowercase host names and IP literals (IPv6 without brackets), no port. */
  readonly allowed: ReadonlySet<string>;
  /** Names that also allow their subdomains: `.example.com` in allowedHosts. */
  readonly suffixes: readonly string[];
}

export function hostPolicy(options: {
  bind: string;
  allowedHosts?: readonly string[];
}): HostPolicy {
  const allowed = new Set<string>(["localhost"]);
  const suffixes: string[] = [];
  const bind = normalizeName(options.bind);
  if (bind === "0.0.0.0" || bind === "::") {
    // A wildcard bind answers on every local address.
    for (const list of Object.values(networkInterfaces())) {
      for (const info of list ?? []) allowed.add(normalizeName(info.address.split("%")[0] ?? ""));
    }
  } else if (bind !== "") {
    allowed.add(bind);
  }
  for (const entry of options.allowedHosts ?? []) {
    const name = normalizeName(entry);
    if (name.startsWith(".")) suffixes.push(name);
    else allowed.add(name);
  }
  return { allowed, suffixes };
}

/** True for `localhost`, 127.0.0.0/8, `::1` and IPv4-mapped loopback. */
export function isLoopbackName(host: string): boolean {
  const name = normalizeName(host);
  if (name === "localhost") return true;
  if (isIP(name) === 4) return name.startsWith("127.");
  if (isIP(name) === 6) {
    if (name === "::1" || name === "0:0:0:0:0:0:0:1") return true;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(name)?.[1];
    return mapped?.startsWith("127.") === true;
  }
  return false;
}

/** The name part of a `Host` header value (`[::1]:8787` → `::1`), lowercase, no trailing dot. */
export function hostName(header: string): string | undefined {
  const value = header.trim().toLowerCase();
  // No whitespace inside a Host ("127.0.0.1 :8787"): malformed, refused like any unknown one.
  if (value === "" || /\s/.test(value)) return undefined;
  if (value.startsWith("[")) {
    const end = value.indexOf("]");
    if (end < 0) return undefined;
    const rest = value.slice(end + 1);
    if (rest !== "" && !/^:\d{1,5}$/.test(rest)) return undefined;
    return value.slice(1, end);
  }
  const match = /^([^:]+)(?::\d{1,5})?$/.exec(value);
  return match ? normalizeName(match[1]!) : undefined;
}

/** Is this `Host` header one the server answers for? A missing or malformed one is not. */
export function hostAllowed(header: string | undefined, policy: HostPolicy): boolean {
  if (header === undefined) return false;
  const name = hostName(header);
  if (name === undefined) return false;
  if (isLoopbackName(name) || policy.allowed.has(name)) return true;
  return policy.suffixes.some((s) => name.endsWith(s) && name.length > s.length);
}

/**
 * Is this `Origin` header acceptable? No Origin (curl, server-to-server,
 * same-origin GET) is fine; a page on another origin, or an opaque `null`
 * origin (sandboxed frames, file: pages), is not.
 */
export function originAllowed(origin: string | undefined, policy: HostPolicy): boolean {
  if (origin === undefined) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return false;
  return hostAllowed(url.host, policy);
}

/**
 * The refusal for a request whose `Host` or `Origin` is not allowed, or
 * undefined when it may be served. Call it first, before auth or routing.
 */
export function hostRefusal(
  headers: { host?: string | undefined; origin?: string | string[] | undefined },
  policy: HostPolicy,
): HearthError | undefined {
  const hint =
    "open it as http://127.0.0.1:PORT or http://localhost:PORT, or list the name in gateway.allowedHosts (docs/security.md)";
  if (!hostAllowed(headers.host, policy)) {
    return new HearthError(
      "HEARTH_HOST_NOT_ALLOWED",
      "this server does not answer for that Host (only loopback names, the address it is bound to, and gateway.allowedHosts)",
      { hint },
    );
  }
  const origin = Array.isArray(headers.origin) ? headers.origin.join(",") : headers.origin;
  if (!originAllowed(origin, policy)) {
    return new HearthError(
      "HEARTH_HOST_NOT_ALLOWED",
      "this server does not answer requests from pages of that Origin",
      { hint },
    );
  }
  return undefined;
}

function normalizeName(name: string): string {
  let n = name.trim().toLowerCase();
  if (n.startsWith("[") && n.endsWith("]")) n = n.slice(1, -1);
  return n.endsWith(".") ? n.slice(0, -1) : n;
}
