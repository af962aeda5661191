import type { FastifyInstance } from "fastify";
import { registerSessionChangeRoutes } from "./sessions/changes.js";
import { registerSessionDetailRoutes } from "./sessions/detail.js";
import { registerSessionExportRoutes } from "./sessions/export.js";
import { registerSessionListRoutes } from "./sessions/list.js";
import { registerSessionMaintenanceRoutes } from "./sessions/maintenance.js";
import { registerSearchRoutes } from "./sessions/search.js";

/** Sessions: the list (filters, keyset pages across profiles), one session, its transcript, changes, export, search. */
/** Every route reaches the stores through storesOf(request): the profiles its login may see. */
export function registerSessionRoutes(app: FastifyInstance): void {
  registerSessionListRoutes(app);
  registerSessionDetailRoutes(app);
  registerSessionExportRoutes(app);
  registerSearchRoutes(app);
  registerSessionChangeRoutes(app);
  registerSessionMaintenanceRoutes(app);
}
