import type { FastifyRequest } from "fastify";
import type { HearthConfig } from "../config/schema.js";
import type { EventRing } from "../log/ring.js";
import type { Responder } from "../turn/responder.js";
import type { ProfileRuntime } from "../turn/run.js";
import type { ToolRegistry } from "../turn/tools/registry.js";
import type { GatewayMetrics } from "./metrics.js";

export interface GatewayDeps {
  runtimes: Map<string, ProfileRuntime>;
  config: () => HearthConfig;
  responder: () => Responder;
  /** The tools offered to turns (tools.* in config.json). */
  tools?: () => ToolRegistry;
  metrics: GatewayMetrics;
  /** Aborted when the gateway stops: responders give up. */
  shutdown: AbortSignal;
  /** Aborted when the gateway starts draining: tool loops stop at their next step. */
  draining?: AbortSignal;
  /** The gateway's recent warn/error log events (GET /v1/events). */
  events?: EventRing;
  /** Reattaches a store whose files changed under the process (F3); called with every failed request's error. */
  recover?: (err: unknown) => Promise<unknown>;
}

/** What a route group is given: the gateway's dependencies and the request's profile runtime. */
export interface RouteContext {
  deps: GatewayDeps;
  /** The served profiles, in order (the first is the default). */
  served: string[];
  /** The runtime of the request's profile (request.hearthProfile); HEARTH_NOT_FOUND when not served. */
  runtimeOf(request: FastifyRequest): ProfileRuntime;
}

declare module "fastify" {
  interface FastifyRequest {
    /** The one profile this request is about (S1): resolved once, used by auth and the handler. */
    hearthProfile: string;
    /** The profile the request's access token was paired for, once verified. */
    authProfile: string | undefined;
  }
}
