import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { HearthError } from "../errors.js";
import { type HostPolicy, hostAllowed, isLoopbackName, originAllowed } from "../http/host-check.js";
import { requireScope } from "../store/token-scopes.js";
import { type BrowserSession, type BrowserSessions, sameToken } from "./browser-sessions.js";
import { dashboardScopeNeeded } from "./route-scopes.js";

/**
 * Sent with every answer. No script but the bundle's own files (no inline
 * script, no eval), no framing, no MIME sniffing, no referrer (a login link
 * carries its token in the URL).
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; "),
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "permissions-policy": "camera=(), microphone=(), geolocation=()",
};

const MUTATING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

declare module "fastify" {
  interface FastifyRequest {
    browser?: BrowserSession;
  }
}

export interface SecurityOptions {
  policy: HostPolicy;
  sessions: BrowserSessions;
  cookieName: string;
  tls: boolean;
}

/**
 * The dashboard's gatekeeping, in the order it runs, before any body is read:
 * 1. `Host` must be one the dashboard answers for (DNS rebinding), else 403;
 * 2. `/api/*` needs a logged-in browser (cookie), else 401; pages redirect
 *    to `/login`;
 * 3. a change (POST, PUT, PATCH, DELETE) needs the session's CSRF token in
 *    `x-csrf-token` AND an `Origin` equal to the dashboard's own, else 403
 *    and nothing is written;
 * 4. the login's scope must cover the route (read, chat, admin), else 403
 *    HEARTH_SCOPE_DENIED. Which profiles it sees is the stores' view
 *    (ProfileStores.forLogin, HEARTH_PROFILE_DENIED).
 */
export function registerSecurity(app: FastifyInstance, options: SecurityOptions): void {
  app.addHook("onRequest", async (request, reply) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) void reply.header(name, value);
    void reply.header("cache-control", "no-store");
    if (!hostAllowed(request.headers.host, options.policy)) {
      request.log.warn(
        { event: "dashboard.host_refused", host: String(request.headers.host ?? "").slice(0, 100) },
        "request refused: unknown Host",
      );
      throw new HearthError(
        "HEARTH_HOST_NOT_ALLOWED",
        "this dashboard does not answer for that Host (only loopback names, the address it is bound to, and dashboard.allowedHosts)",
        {
          hint: "open it as http://127.0.0.1:PORT or http://localhost:PORT, or list the name in dashboard.allowedHosts",
        },
      );
    }
    const path = request.url.split("?")[0] ?? "";
    request.browser = await options.sessions.get(request.cookies[options.cookieName]);
    if (path.startsWith("/api/")) {
      if (!request.browser) {
        throw new HearthError("HEARTH_UNAUTHORIZED", "log in to the dashboard first", {
          hint: "hearth dashboard link   # prints a one-time login link",
        });
      }
      if (MUTATING.has(request.method)) checkChange(request, options);
      const route = request.routeOptions.url;
      if (route !== undefined) {
        requireScope(
          request.browser.scope,
          dashboardScopeNeeded(request.method, route),
          `${request.method} ${route}`,
        );
      }
    }
  });
}

function checkChange(request: FastifyRequest, options: SecurityOptions): void {
  const origin = request.headers.origin;
  const expected = `${options.tls ? "https" : "http"}://${request.headers.host ?? ""}`;
  const sameOrigin =
    typeof origin === "string" &&
    originAllowed(origin, options.policy) &&
    normalizeOrigin(origin) === normalizeOrigin(expected);
  const token = request.headers["x-csrf-token"];
  const csrfOk = sameToken(typeof token === "string" ? token : undefined, request.browser!.csrf);
  if (sameOrigin && csrfOk) return;
  request.log.warn(
    { event: "dashboard.change_refused", sameOrigin, csrf: csrfOk, method: request.method },
    "change refused: CSRF token or Origin",
  );
  throw new HearthError(
    "HEARTH_CSRF_REJECTED",
    sameOrigin
      ? "this change did not carry the session's CSRF token (x-csrf-token); nothing was written"
      : "this change did not come from a dashboard page (its Origin is missing or foreign); nothing was written",
    {
      hint: "make changes from the dashboard's own pages; reload the page if it was open before a restart",
    },
  );
}

function normalizeOrigin(value: string): string {
  try {
    return new URL(value).origin;
  } catch {
    return "";
  }
}

/** Pages need a login: answer with a redirect to /login when there is none. */
export function requirePage(request: FastifyRequest, reply: FastifyReply): boolean {
  if (request.browser) return true;
  void reply.redirect("/login", 302);
  return false;
}

/** Binding beyond loopback without TLS is refused: the cookie and every transcript would cross the network in clear. */
export function assertSafeBind(host: string, tls: boolean): void {
  if (tls || isLoopbackName(host)) return;
  throw new HearthError(
    "HEARTH_EXPOSED_WITHOUT_TLS",
    `refusing to serve the dashboard on ${host} without TLS: its login cookie and every transcript would cross the network in clear`,
    {
      resource: "dashboard.host",
      hint: 'keep "dashboard.host": "127.0.0.1" and reach it through an SSH tunnel (ssh -L 8788:127.0.0.1:8788 you@server), or set "dashboard.tls": { "certFile": …, "keyFile": … } and list its name in dashboard.allowedHosts (docs/dashboard.md)',
    },
  );
}
