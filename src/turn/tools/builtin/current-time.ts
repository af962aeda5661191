import type { Tool } from "../types.js";

/** The current date and time, in UTC and (when given) an IANA time zone. */
export const currentTime: Tool = {
  name: "current_time",
  description: "The current date and time (ISO 8601, UTC), optionally also in an IANA time zone.",
  parameters: {
    type: "object",
    properties: {
      timeZone: { type: "string", description: 'an IANA time zone, e.g. "Europe/Paris"' },
    },
    additionalProperties: false,
  },
  idempotent: true,
  async run(args) {
    const now = new Date();
    const result: Record<string, string> = { utc: now.toISOString() };
    if (typeof args.timeZone === "string") {
      try {
        result.local = now.toLocaleString("sv-SE", { timeZone: args.timeZone }).replace(" ", "T");
        result.timeZone = args.timeZone;
      } catch {
        throw new RangeError(`unknown time zone ${JSON.stringify(args.timeZone)}`);
      }
    }
    return result;
  },
};
