import { HearthError } from "../errors.js";
import { failpoint } from "../failpoints.js";
import type { PermissionRow } from "../store/tool-permissions.js";
import type { Message } from "../store/types.js";
import { acquireCas, type Turn } from "./leases.js";
import { type PermissionAsker, permissionGate } from "./permission.js";
import type { Responder } from "./responder.js";
import type { ProfileRuntime } from "./run.js";
import type { StopSignal } from "./stop.js";
import {
  callsOf,
  clearStart,
  pendingCalls,
  resultMessage,
  startKey,
  startRecord,
  uniqueIds,
} from "./tool-records.js";
import { executeTool, type ToolOutcome } from "./tools/execute.js";
import type { ToolRegistry } from "./tools/registry.js";
import type { ToolCall } from "./tools/types.js";
import { usageFields } from "./usage.js";

export interface LoopEvents {
  onDelta?: (text: string) => void;
  /** An assistant message that calls tools is committed (its calls are pending). */
  onToolCalls?: (message: Message) => void;
  /** A call's start is recorded and it runs now. */
  onToolStart?: (call: ToolCall) => void;
  /** A tool's result is committed. */
  onToolResult?: (message: Message) => void;
  /** A call waits for a person's permission; the request is committed (permission.ts). */
  onPermissionRequired?: (request: PermissionRow) => void;
}

export interface LoopContext {
  runtime: ProfileRuntime;
  turn: Turn;
  leaseMs: number;
  responder: Responder;
  tools: ToolRegistry | undefined;
  /** Aborts whatever runs (the model request, a tool). */
  signal: AbortSignal;
  /** Stops the loop at the next step boundary (a client gone, a drain). */
  stop?: StopSignal | undefined;
  events: LoopEvents;
  /**
   * The text streamed (onDelta) by the model request in progress, reset at
   * each request: what a turn cut short stores as its partial answer.
   */
  streamed?: { text: string };
  /** Asks a person directly (ACP); without it the turn waits for a decision in the store. */
  askPermission?: PermissionAsker | undefined;
}

/**
 * The agent turn's model/tool loop (D7). Each step is committed before the
 * next begins: the assistant's tool-call message, then for each call a start
 * row, the run, and its result. The loop begins by settling the calls the
 * transcript left without a result, which is also how a turn resumed after a
 * crash continues: a call with a result is never run again; one that never
 * started runs; one that started without a result is reported as interrupted
 * (run again only when the tool declares itself idempotent).
 * `transcript` is the live transcript; committed steps are pushed onto it.
 * Returns the final reply's text and what it cost; the caller commits it.
 */
export async function toolLoop(ctx: LoopContext, transcript: Message[]): Promise<FinalAnswer> {
  const { profile } = ctx.runtime;
  const { maxRounds } = ctx.tools?.limits ?? { maxRounds: 0 };
  let rounds = roundsSoFar(transcript);
  for (;;) {
    await settle(ctx, transcript);
    stopIfCancelled(ctx);
    const specs = rounds < maxRounds ? ((await ctx.tools?.specs(profile)) ?? []) : [];
    const onDelta = streamedDeltas(ctx);
    const answer = await ctx.responder.respond({
      transcript,
      signal: ctx.signal,
      ...(onDelta ? { onDelta } : {}),
      ...(specs.length > 0 ? { tools: specs } : {}),
    });
    if (specs.length === 0 || !answer.toolCalls || answer.toolCalls.length === 0)
      return { content: answer.content, ...usageFields(answer.usage) };
    rounds++;
    stopIfCancelled(ctx);
    const message = await ctx.runtime.committer.append(
      ctx.turn.sessionId,
      {
        role: "assistant",
        content: answer.content,
        toolCalls: uniqueIds(answer.toolCalls, transcript),
        ...usageFields(answer.usage),
      },
      { metaBefore: renewal(ctx) },
    );
    transcript.push(message);
    ctx.events.onToolCalls?.(message);
  }
}

/** The reply the caller commits: its text, and its tokens and model when reported. */
export type FinalAnswer = ReturnType<typeof usageFields> & { content: string };

/** The events' onDelta, also kept in ctx.streamed (emptied for the new request). */
function streamedDeltas(ctx: LoopContext): ((text: string) => void) | undefined {
  const { onDelta } = ctx.events;
  const { streamed } = ctx;
  if (!onDelta || !streamed) return onDelta;
  streamed.text = "";
  return (text) => {
    streamed.text += text;
    onDelta(text);
  };
}

async function settle(ctx: LoopContext, transcript: Message[]): Promise<void> {
  const { store, profile } = ctx.runtime;
  const pending = pendingCalls(transcript);
  for (const [i, call] of pending.entries()) {
    if (cancelled(ctx)) {
      // The transcript stays well-formed: every call gets its result.
      for (const rest of pending.slice(i))
        await commitResult(ctx, transcript, rest, {
          status: "cancelled",
          output: "not run: the turn was cancelled",
        });
      stopIfCancelled(ctx);
    }
    const tool = ctx.tools?.get(profile, call.function.name);
    const started = await store.meta.get(startKey(ctx.turn.sessionId, call.id));
    if (started !== null && !tool?.idempotent) {
      await commitResult(ctx, transcript, call, {
        status: "interrupted",
        output:
          "this call was interrupted (the process running it stopped) and its result is unknown; it was not run again",
      });
      continue;
    }
    const refused = await permissionGate(ctx, call, tool);
    if (refused) {
      await commitResult(ctx, transcript, call, refused);
      continue;
    }
    await store.meta.set(
      startKey(ctx.turn.sessionId, call.id),
      startRecord(call.function.name, ctx.turn.turnId),
    );
    ctx.events.onToolStart?.(call);
    const outcome = await executeTool(
      tool,
      call,
      {
        store,
        profile,
        sessionId: ctx.turn.sessionId,
        signal: ctx.signal,
        settings: ctx.tools?.settings(call.function.name) ?? {},
        sessionScope: ctx.tools?.sessionScope(profile) ?? "chat",
      },
      ctx.tools?.limits ?? { timeoutMs: 30_000, maxOutputBytes: 16_384 },
    );
    failpoint("turn.before-tool-result");
    await commitResult(ctx, transcript, call, outcome);
    failpoint("turn.after-tool-result");
  }
}

async function commitResult(
  ctx: LoopContext,
  transcript: Message[],
  call: ToolCall,
  outcome: ToolOutcome,
): Promise<void> {
  const message = await ctx.runtime.committer.append(
    ctx.turn.sessionId,
    resultMessage(call, outcome),
    { metaBefore: renewal(ctx), metaAfter: clearStart(ctx.turn.sessionId, call.id) },
  );
  transcript.push(message);
  ctx.events.onToolResult?.(message);
}

/** Each committed step renews the turn's lease, and fails if another turn took it over. */
function renewal(ctx: LoopContext) {
  return acquireCas(ctx.turn, ctx.leaseMs);
}

function cancelled(ctx: LoopContext): boolean {
  return ctx.signal.aborted || ctx.stop?.aborted === true;
}

function stopIfCancelled(ctx: LoopContext): void {
  if (cancelled(ctx)) throw cancelledError(ctx.turn.sessionId);
}

export function cancelledError(sessionId: string): HearthError {
  return new HearthError(
    "HEARTH_TURN_CANCELLED",
    `the turn on session ${sessionId} was cancelled`,
    {
      resource: sessionId,
      hint: "its steps so far are stored; send the message again to continue",
    },
  );
}

/** Tool-call messages since the last user message: the rounds this turn already used. */
function roundsSoFar(transcript: readonly Message[]): number {
  let n = 0;
  for (let i = transcript.length - 1; i >= 0 && transcript[i]!.role !== "user"; i--)
    if (callsOf(transcript[i]!).length > 0) n++;
  return n;
}
