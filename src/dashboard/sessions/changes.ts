import type { FastifyInstance } from "fastify";
import { browserActor } from "../api-audit.js";
import { storesOf } from "../profiles.js";
import { params } from "./schemas.js";

/**
 * Changes to sessions: rename, pin, archive, hide (PATCH), delete, and
 * archive or unarchive many at once. Ordinary row writes, each through a
 * writer opened for it (ProfileStores.withWriter).
 */
export function registerSessionChangeRoutes(app: FastifyInstance): void {
  app.patch<{
    Params: { profile: string; id: string };
    Body: { title?: string | null; pinned?: boolean; archived?: boolean; hidden?: boolean };
  }>(
    "/api/sessions/:profile/:id",
    {
      schema: {
        params,
        body: {
          type: "object",
          additionalProperties: false,
          minProperties: 1,
          properties: {
            title: { type: ["string", "null"], maxLength: 200 },
            pinned: { type: "boolean" },
            archived: { type: "boolean" },
            hidden: { type: "boolean" },
          },
        },
      },
    },
    async (request) => {
      const stores = storesOf(request);
      const { profile, id } = request.params;
      const body = request.body;
      const session = await stores.withWriter(profile, async (store) => {
        let s = await store.sessions.require(id);
        if (body.title !== undefined) s = await store.sessions.rename(id, body.title, "user");
        if (body.pinned !== undefined) s = await store.sessions.setPinned(id, body.pinned);
        if (body.archived !== undefined)
          s = await store.sessions.setArchived(id, body.archived, {
            actor: browserActor(request),
          });
        if (body.hidden !== undefined) s = await store.sessions.setHidden(id, body.hidden);
        return s;
      });
      request.log.info(
        { event: "dashboard.session_changed", profile, id, change: Object.keys(body) },
        "session changed",
      );
      return { profile, session };
    },
  );

  app.delete<{ Params: { profile: string; id: string } }>(
    "/api/sessions/:profile/:id",
    { schema: { params } },
    async (request) => {
      const stores = storesOf(request);
      const { profile, id } = request.params;
      await stores.reader(profile).sessions.require(id);
      const deleted = await stores.withWriter(profile, (store) =>
        store.sessions.delete(id, { actor: browserActor(request) }),
      );
      request.log.info({ event: "dashboard.session_deleted", profile, id }, "session deleted");
      return { profile, id, deleted };
    },
  );

  app.post<{
    Body: { action: "archive" | "unarchive"; sessions: { profile: string; id: string }[] };
  }>(
    "/api/sessions/bulk",
    {
      schema: {
        body: {
          type: "object",
          required: ["action", "sessions"],
          additionalProperties: false,
          properties: {
            action: { type: "string", enum: ["archive", "unarchive"] },
            sessions: { type: "array", minItems: 1, maxItems: 500, items: params },
          },
        },
      },
    },
    async (request) => {
      const stores = storesOf(request);
      const { action, sessions } = request.body;
      const done: { profile: string; id: string }[] = [];
      const failed: { profile: string; id: string; error: unknown }[] = [];
      const profiles = new Set(sessions.map((s) => s.profile));
      // Every profile is checked before anything is written: a refusal changes nothing.
      for (const profile of profiles) stores.reader(profile);
      for (const profile of profiles) {
        await stores.withWriter(profile, async (store) => {
          for (const s of sessions.filter((x) => x.profile === profile)) {
            try {
              await store.sessions.setArchived(s.id, action === "archive", {
                actor: browserActor(request),
              });
              done.push(s);
            } catch (err) {
              failed.push({
                ...s,
                error: (err as { toJSON?: () => unknown }).toJSON?.() ?? String(err),
              });
            }
          }
        });
      }
      return { done, failed };
    },
  );
}
