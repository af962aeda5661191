import { PROFILE_PATTERN } from "../config/paths.js";
import { HearthError } from "../errors.js";
import { textProblem } from "../turn/storable-text.js";

/** The body of POST /v1/messages, checked strictly (no coercion, nothing unknown). */
export const messageBody = {
  type: "object",
  required: ["platform", "chat", "content"],
  additionalProperties: false,
  properties: {
    profile: { type: "string", pattern: PROFILE_PATTERN },
    platform: { type: "string", minLength: 1, maxLength: 64 },
    chat: { type: "string", minLength: 1, maxLength: 256 },
    content: { type: "string", minLength: 1 },
    clientId: { type: "string", minLength: 1, maxLength: 128 },
    stream: { type: "boolean" },
  },
} as const;

/** Query strings arrive as strings: flags are "true" or "false". */
export const FLAG = { type: "string", enum: ["true", "false"] } as const;

/** A query-string schema: every route takes `profile`; nothing unknown is accepted. */
export function query(properties: Record<string, unknown>) {
  return {
    type: "object",
    additionalProperties: false,
    properties: { profile: { type: "string", pattern: PROFILE_PATTERN }, ...properties },
  } as const;
}

export interface MessageBody {
  profile?: string;
  platform: string;
  chat: string;
  content: string;
  clientId?: string;
  stream?: boolean;
}

/** Strings a message is made of must be exactly storable: no lone surrogate; no control character in names. */
export function checkText(body: MessageBody): void {
  const fields: [string, string | undefined, boolean][] = [
    ["platform", body.platform, true],
    ["chat", body.chat, true],
    ["clientId", body.clientId, true],
    ["content", body.content, false],
  ];
  for (const [field, value, names] of fields) {
    if (value === undefined) continue;
    const problem = textProblem(value, names);
    if (!problem) continue;
    throw new HearthError("HEARTH_BAD_REQUEST", `bad request: body/${field} ${problem}`, {
      hint: /surrogate/.test(problem)
        ? "send well-formed Unicode (each surrogate in a pair)"
        : `${field} is a name: printable characters only`,
    });
  }
}
