import { once } from "./once.js";
import { z } from "./zod.js";

const PATTERN_NAME = /^[a-zA-Z0-9_.-]{1,64}$/;

/**
 * Redaction of secrets in stored transcripts (docs/security.md#redaction):
 * off unless `enabled` (every profile) or `profiles.<name>.enabled`. When
 * on, message content is rewritten before it is committed.
 */
export const redactionSchema = once(() => {
  /** A pattern's source compiles as a JavaScript regular expression (with its flags), or a config problem says why. */
  const patternSchema = z
    .object({
      /** Shown in the replacement: `[redacted:<name>]`. */
      name: z.string().regex(PATTERN_NAME, "must be 1-64 letters, digits, _, . or -"),
      /** A JavaScript regular expression; every match is replaced. */
      regex: z.string().min(1).max(1000),
      /** Extra flags: any of i, m, s, u (g is always on). */
      flags: z
        .string()
        .regex(/^[imsu]{0,4}$/, "may hold only i, m, s and u")
        .default(""),
    })
    .strict()
    .superRefine((p, ctx) => {
      try {
        new RegExp(p.regex, `g${p.flags}`);
      } catch (err) {
        ctx.addIssue({
          code: "custom",
          path: ["regex"],
          message: `is not a valid regular expression (${(err as Error).message})`,
        });
        return;
      }
      if (new RegExp(p.regex, `g${p.flags}`).test("")) {
        ctx.addIssue({ code: "custom", path: ["regex"], message: "matches the empty string" });
      }
    });

  return z
    .object({
      enabled: z.boolean().default(false),
      /** The built-in patterns (OpenAI, GitHub, AWS, Slack keys, Bearer tokens). */
      builtin: z.boolean().default(true),
      patterns: z.array(patternSchema).max(64).default([]),
      profiles: z
        .record(z.string().min(1), z.object({ enabled: z.boolean() }).strict())
        .default({}),
    })
    .strict();
});
