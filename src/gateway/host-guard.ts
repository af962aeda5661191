import type { FastifyInstance } from "fastify";
import { isProfileName } from "../config/paths.js";
import type { HearthConfig } from "../config/schema.js";
import { HearthError } from "../errors.js";
import { hostPolicy, hostRefusal } from "../http/host-check.js";
import { truncate } from "./http-errors.js";

/**
 * First, before anything else: is this a Host (and Origin) we answer for?
 * (S1, DNS rebinding) Then the profile asked for in the query string is
 * checked before it is used or echoed. The policy follows a reloaded
 * config's allowedHosts (the bind address is the one the gateway started
 * with); the last Host that passed without an Origin passes again without
 * being parsed again.
 */
export function registerHostGuard(app: FastifyInstance, config: () => HearthConfig): void {
  const first = config();
  const bind = first.gateway.host;
  let policy = {
    config: first,
    value: hostPolicy({ bind, allowedHosts: first.gateway.allowedHosts }),
    passed: undefined as string | undefined,
  };
  // A callback hook, not an async one: no promise and no microtask per request (issue 44).
  // A throw is answered by the error handler like a rejection.
  app.addHook("onRequest", (request, _reply, done) => {
    const now = config();
    if (policy.config !== now) {
      policy = {
        config: now,
        value: hostPolicy({ bind, allowedHosts: now.gateway.allowedHosts }),
        passed: undefined,
      };
    }
    const { host, origin } = request.headers;
    const known = host !== undefined && host === policy.passed && origin === undefined;
    const refusal = known ? undefined : hostRefusal(request.headers, policy.value);
    if (!refusal && origin === undefined) policy.passed = host;
    if (refusal) {
      request.log.warn(
        {
          event: "http.host_refused",
          ip: request.ip,
          host: truncate(request.headers.host ?? "", 100),
        },
        "request refused: unknown Host or Origin",
      );
      throw refusal;
    }
    const asked = (request.query as { profile?: unknown } | undefined)?.profile;
    if (asked !== undefined && !isProfileName(asked)) {
      throw new HearthError(
        "HEARTH_BAD_REQUEST",
        'bad request: the "profile" query parameter must be one profile name (1–64 lowercase letters, digits, "-" or "_")',
        { hint: "see docs/gateway.md for the request shapes" },
      );
    }
    done();
  });
}
