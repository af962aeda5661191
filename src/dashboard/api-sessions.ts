import type { FastifyInstance } from "fastify";
import { registerSessionChangeRoutes } from "./sessions/changes.js";
import { registerSessionDetailRoutes } from "./sessions/detail.js";
import { registerSessionExportRoutes } from "./sessions/export.js";
import { registerSessionListRoutes } from "./sessions/list.js";
import { registerSessionMaintenanceRoutes } from "./sessions/maintenance.js";
import type { SessionRoutesDeps } from "./sessions/scope.js";
import { registerSearchRoutes } from "./sessions/search.js";

export type { SessionRoutesDeps } from "./sessions/scope.js";

/** Sessions: the list (filters, keyset pages across profiles), one session, its transcript, changes, export, search. */
export function registerSessionRoutes(app: FastifyInstance, deps: SessionRoutesDeps): void {
  registerSessionListRoutes(app, deps);
  registerSessionDetailRoutes(app, deps);
  registerSessionExportRoutes(app, deps);
  registerSearchRoutes(app, deps);
  registerSessionChangeRoutes(app, deps);
  registerSessionMaintenanceRoutes(app, deps);
}
