import type { z } from "zod";
import { HearthError } from "../errors.js";
import { configSchema, type HearthConfig } from "./schema.js";
import { closest } from "./suggest.js";

/**
 * Validate a raw config object. An unknown key or a bad value is an error
 * that names the key, the allowed values and, for a typo, the likely key.
 */
export function validateConfig(raw: unknown, source: string): HearthConfig {
  const result = configSchema.safeParse(raw);
  if (result.success) return result.data;
  const problems = result.error.issues.flatMap((issue) => describeIssue(issue));
  const first = problems[0]!;
  throw new HearthError(
    "HEARTH_CONFIG_INVALID",
    `invalid configuration in ${source}: ${problems.map((p) => p.text).join("; ")}`,
    {
      resource: source,
      hint: first.hint,
      details: { problems: problems.map(({ key, text }) => ({ key, message: text })) },
    },
  );
}

interface Problem {
  key: string;
  text: string;
  hint: string;
}

function describeIssue(issue: z.core.$ZodIssue): Problem[] {
  const where = issue.path.map(String).join(".");
  if (issue.code === "unrecognized_keys") {
    const known = knownKeys(issue.path.map(String));
    return issue.keys.map((key) => {
      const full = where ? `${where}.${key}` : key;
      const guess = closest(key, known);
      return {
        key: full,
        text: `unknown key "${full}"${guess ? ` (did you mean "${guess}"?)` : ""}; known keys here: ${known.join(", ")}`,
        hint: guess ? `rename "${key}" to "${guess}"` : `remove "${full}"`,
      };
    });
  }
  if (issue.code === "invalid_value") {
    const allowed = issue.values.map((v) => JSON.stringify(v)).join(", ");
    return [
      {
        key: where,
        text: `"${where}" must be one of ${allowed}`,
        hint: `set "${where}" to one of ${allowed}`,
      },
    ];
  }
  if (issue.code === "invalid_key") {
    // A record's key (a tool or server name): say what the name must be, not only "Invalid key".
    const why = issue.issues[0]?.message ?? issue.message;
    return [{ key: where, text: `"${where}": the name ${why}`, hint: `rename "${where}"` }];
  }
  return [{ key: where, text: `"${where}": ${issue.message}`, hint: `fix "${where}"` }];
}

function knownKeys(path: string[]): string[] {
  let shape: unknown = configSchema;
  for (const segment of path) {
    shape = unwrap(shape)?.shape?.[segment];
  }
  return Object.keys(unwrap(shape)?.shape ?? {});
}

function unwrap(schema: unknown): { shape?: Record<string, unknown> } | undefined {
  let current = schema as { shape?: Record<string, unknown>; unwrap?: () => unknown } | undefined;
  while (current && current.shape === undefined && typeof current.unwrap === "function") {
    current = current.unwrap() as typeof current;
  }
  return current;
}
