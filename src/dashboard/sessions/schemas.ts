import { PROFILE_PATTERN } from "../../config/paths.js";

/** JSON schemas the session routes share (query strings are strings: numbers and flags are patterns). */

export const MAX_LIMIT = 200;
const ID = { type: "string", minLength: 1, maxLength: 200 } as const;
export const PROFILE = { type: "string", pattern: PROFILE_PATTERN } as const;
export const FLAG = { type: "string", enum: ["true", "false"] } as const;
export const LIMIT = { type: "string", pattern: "^[1-9][0-9]{0,2}$" } as const;
/** `/:profile/:id` of one session. */
export const params = {
  type: "object",
  required: ["profile", "id"],
  properties: { profile: PROFILE, id: ID },
} as const;
