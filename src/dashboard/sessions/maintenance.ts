import type { FastifyInstance } from "fastify";
import { browserActor } from "../api-audit.js";
import { storesOf } from "../profiles.js";
import { PROFILE } from "./schemas.js";

/** POST /api/maintenance/delete-empty: delete a profile's empty sessions, or with dryRun only list them (on the reader). */
export function registerSessionMaintenanceRoutes(app: FastifyInstance): void {
  app.post<{ Body: { profile: string; dryRun?: boolean } }>(
    "/api/maintenance/delete-empty",
    {
      schema: {
        body: {
          type: "object",
          required: ["profile"],
          additionalProperties: false,
          properties: { profile: PROFILE, dryRun: { type: "boolean" } },
        },
      },
    },
    async (request) => {
      const stores = storesOf(request);
      const { profile, dryRun } = request.body;
      const ids = dryRun
        ? await stores.reader(profile).sessions.deleteEmpty({ dryRun: true })
        : await stores.withWriter(profile, (store) =>
            store.sessions.deleteEmpty({ actor: browserActor(request) }),
          );
      return { profile, dryRun: dryRun === true, deleted: ids };
    },
  );
}
