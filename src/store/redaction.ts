/**
 * Redaction of secrets in stored transcripts (docs/security.md#redaction),
 * whatever the backend: when the profile's configuration turns it on, every
 * message a store writes (append, batches, group commits, transcript saves,
 * suffix replacements, compaction summaries) has its content and its tool
 * calls' text rewritten before it is validated, hashed for replays and
 * committed: each match becomes `[redacted:<name>]`.
 */
import type { HearthConfig } from "../config/schema.js";
import type { NewMessage } from "./types.js";

export interface RedactionPattern {
  name: string;
  regex: string;
  flags?: string;
}

/** The built-in patterns: common API keys and tokens. */
export const BUILTIN_PATTERNS: readonly RedactionPattern[] = [
  { name: "openai", regex: "\\bsk-[A-Za-z0-9_-]{20,}" },
  { name: "github", regex: "\\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})" },
  { name: "aws", regex: "\\b(?:AKIA|ASIA)[0-9A-Z]{16}\\b" },
  { name: "slack", regex: "\\bxox[abposr]-[A-Za-z0-9-]{10,}" },
  { name: "bearer", regex: "(?<=\\bBearer\\s+)[A-Za-z0-9._~+/-]{16,}=*", flags: "i" },
];

/** Rewrites a message's text; the identity when redaction is off. */
export type Redactor = (message: NewMessage) => NewMessage;

/** The redactor of `profile` under `config`, or undefined when redaction is off for it. */
export function redactorFor(config: HearthConfig, profile: string): Redactor | undefined {
  const r = config.redaction;
  if (!(r.profiles[profile]?.enabled ?? r.enabled)) return undefined;
  const patterns = [...(r.builtin ? BUILTIN_PATTERNS : []), ...r.patterns].map(
    (p) => [new RegExp(p.regex, `g${p.flags ?? ""}`), `[redacted:${p.name}]`] as const,
  );
  if (patterns.length === 0) return undefined;
  const text = (s: string): string => {
    let out = s;
    for (const [re, replacement] of patterns) out = out.replace(re, replacement);
    return out;
  };
  return (message) => redactMessage(message, text);
}

/** `message` with `text` applied to its content and to every string of its tool calls. */
function redactMessage(message: NewMessage, text: (s: string) => string): NewMessage {
  // Anything malformed is left as it is: prepare() refuses it with its own error.
  if (message === null || typeof message !== "object") return message;
  const out = { ...message };
  if (typeof message.content === "string") out.content = text(message.content);
  else if (message.content !== null && typeof message.content === "object")
    out.content = strings(message.content, text) as NewMessage["content"];
  if (Array.isArray(message.toolCalls))
    out.toolCalls = strings(message.toolCalls, text) as unknown[];
  return out;
}

/** A JSON value with `text` applied to each string in it (a copy: JSON in, JSON out). */
function strings(value: unknown, text: (s: string) => string): unknown {
  let copy: unknown;
  try {
    copy = JSON.parse(JSON.stringify(value));
  } catch {
    return value; // not JSON (a cycle, a BigInt): prepare() says so
  }
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return text(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === "object")
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(copy);
}
