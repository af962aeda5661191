import type { z } from "zod";
import { HearthError } from "../errors.js";
import { EMPTY_CONFIG_RESULT } from "./defaults.js";
import { configSchema, type HearthConfig, SECTIONS } from "./schema.js";
import { closest } from "./suggest.js";

/**
 * Validate a raw config object. An unknown key or a bad value is an error
 * that names the key, the allowed values and, for a typo, the likely key.
 */
export function validateConfig(raw: unknown, source: string): HearthConfig {
  const result = parseBySection(raw);
  if (result.data) return result.data;
  const problems = result.issues.flatMap((issue) => describeIssue(issue));
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

type Section = keyof typeof SECTIONS;

/** @internal The configuration, or every problem zod found in it. */
export type SectionsResult =
  | { data: HearthConfig; issues?: undefined }
  | { data?: undefined; issues: z.core.$ZodIssue[] };

/**
 * What configSchema().safeParse(raw) gives, the same data and the same
 * issues in the same order, with only the sections `raw` holds built and
 * parsed: a section it leaves out is that section's written-out default
 * (defaults.ts, a fresh copy), as the schema's .default() would give. A
 * config.json that sets gateway.port builds the gateway's schema alone,
 * not the other ten sections' (docs/benchmarks.md, workload 12). Anything
 * but an object of known sections goes to the whole schema.
 *
 * @internal exported for its test (test/unit/config-sections.test.ts)
 */
export function parseBySection(raw: unknown): SectionsResult {
  if (
    raw === null ||
    typeof raw !== "object" ||
    Array.isArray(raw) ||
    Object.keys(raw).some((key) => !Object.hasOwn(SECTIONS, key))
  ) {
    const whole = configSchema().safeParse(raw);
    return whole.success ? { data: whole.data } : { issues: whole.error.issues };
  }
  const data: Record<string, unknown> = {};
  const issues: z.core.$ZodIssue[] = [];
  for (const key of Object.keys(SECTIONS) as Section[]) {
    const value = (raw as Record<string, unknown>)[key];
    if (value === undefined) {
      data[key] = structuredClone(EMPTY_CONFIG_RESULT[key]);
      continue;
    }
    const result = SECTIONS[key]().safeParse(value);
    if (result.success) data[key] = result.data;
    else issues.push(...result.error.issues.map((i) => ({ ...i, path: [key, ...i.path] })));
  }
  return issues.length > 0 ? { issues } : { data: data as HearthConfig };
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
  let shape: unknown = configSchema();
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
