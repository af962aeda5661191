import type { FastifyInstance } from "fastify";
import { type Prices, priceBuckets } from "./prices.js";
import { storesOf } from "./profiles.js";
import { PROFILE } from "./sessions/schemas.js";
import { profilesOf } from "./sessions/scope.js";

const BUCKETS = { hour: 3_600_000, day: 86_400_000 } as const;

/**
 * GET /api/activity: per profile, per hour or day and platform, messages,
 * turns, failed turns, tokens and turn latency (p50/p95), aggregated by the
 * store (Browse.activity, the same on SQLite and PostgreSQL) on the
 * read-only connection; and the cost of the tokens by `prices`
 * (dashboard.prices).
 */
export function registerActivityRoutes(app: FastifyInstance, prices: Prices = {}): void {
  app.get<{ Querystring: { profile?: string; days?: string; bucket?: "hour" | "day" } }>(
    "/api/activity",
    {
      schema: {
        querystring: {
          type: "object",
          additionalProperties: false,
          properties: {
            profile: PROFILE,
            days: { type: "string", pattern: "^([1-9]|[1-8][0-9]|90)$" },
            bucket: { type: "string", enum: ["hour", "day"] },
          },
        },
      },
    },
    async (request) => {
      const stores = storesOf(request);
      const days = Number(request.query.days ?? 30);
      const bucketMs = BUCKETS[request.query.bucket ?? "day"];
      // From the start of the first bucket, so every bucket shown is whole.
      const since = Math.floor((Date.now() - days * 86_400_000) / bucketMs) * bucketMs;
      const profiles = [];
      for (const profile of profilesOf(stores, request.query.profile)) {
        const buckets = await stores.reader(profile).browse.activity({ since, bucketMs });
        profiles.push({ profile, buckets: priceBuckets(buckets, prices) });
      }
      return { since, bucketMs, profiles };
    },
  );
}
