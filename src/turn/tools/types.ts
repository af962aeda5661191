import type { SessionScope } from "../../config/tools.js";
import type { Store } from "../../store/api.js";

/** A JSON-schema object describing a tool's arguments (sent to the model as is). */
export type JsonSchema = Record<string, unknown>;

/** What a tool gets besides its arguments: the profile it runs on and when to stop. */
export interface ToolContext {
  store: Store;
  profile: string;
  /** The session whose turn called the tool. */
  sessionId: string;
  /** Aborted on the tool's timeout, the client's disconnect or the process's drain. */
  signal: AbortSignal;
  /** This tool's own settings from `tools.settings.<name>` (validated by the tool). */
  settings: Record<string, unknown>;
  /**
   * Which sessions a tool that reads sessions may see (`tools.sessionScope`):
   * "chat" only the current chat's (or owner's), "profile" all of them.
   * Absent means "chat": a tool fails closed.
   */
  sessionScope?: SessionScope;
}

/**
 * One tool the model may call. `run` returns text or a JSON-serialisable
 * value; a thrown error becomes the tool's result, never a crashed turn.
 * `idempotent` declares that running it twice is harmless: a resumed turn
 * may then rerun a call that started but recorded no result; any other
 * such call is reported to the model as interrupted.
 */
export interface Tool {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
  readonly idempotent: boolean;
  /**
   * The tool changes something outside the transcript: a person must
   * allow each call first (docs/gateway.md#permission). Absent means false.
   * MCP tools carry true unless their server's config says otherwise or the
   * tool declares `readOnlyHint`.
   */
  readonly requiresPermission?: boolean;
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<unknown>;
}

/** A tool call as the model asked for it (OpenAI's shape: arguments are a JSON string). */
export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** What the responder is told about a tool. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: JsonSchema;
}
