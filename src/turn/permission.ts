import { EventEmitter } from "node:events";
import type { PermissionAnswer, PermissionRow } from "../store/tool-permissions.js";
import { acquireDecider, leasePresence } from "./leases.js";
import type { StopSignal } from "./stop.js";
import type { LoopContext } from "./tool-loop.js";
import { cap, type ToolOutcome } from "./tools/execute.js";
import type { Tool, ToolCall } from "./tools/types.js";

/**
 * Permission before a tool acts (docs/gateway.md#permission). A tool that
 * declares `requiresPermission` (or is named in tools.requirePermission)
 * runs only once a person allowed it: the request is committed first
 * (store.toolPermissions), then announced (an SSE `permission_required`
 * event, or an ACP `session/request_permission`), and the turn waits for
 * the decision in the store, whoever writes it (a client's POST on any
 * gateway, the ACP client's answer, the deadline). A turn resumed after a
 * crash finds its request there and waits for the same answer. "Always"
 * is remembered per session and tool, and asks no more.
 */

/** How a process that can ask a person directly (ACP) does: the answer, or undefined when none came. */
export type PermissionAsker = (
  request: PermissionRow,
  signal: AbortSignal,
) => Promise<PermissionAnswer | undefined>;

/** How often a waiting turn reads the store (a decision made by another process). */
const POLL_MS = 500;
/** The arguments a person is shown, at most this many bytes. */
const SUMMARY_BYTES = 1024;

/** In-process wake-ups: a decision written by this process is seen at once. */
const decided = new EventEmitter();
decided.setMaxListeners(0);
const wakeKey = (sessionId: string, callId: string) => `${sessionId}\0${callId}`;

/** Tell a turn of this process waiting on (session, call) that its decision is in the store. */
export function permissionDecided(sessionId: string, callId: string): void {
  decided.emit(wakeKey(sessionId, callId));
}

/**
 * Undefined when `call` may run now; otherwise the outcome to record in its
 * place (denied, or cancelled when the turn stopped while it waited).
 */
export async function permissionGate(
  ctx: LoopContext,
  call: ToolCall,
  tool: Tool | undefined,
): Promise<ToolOutcome | undefined> {
  if (!tool || !(tool.requiresPermission === true || ctx.tools?.requiresPermission(tool.name)))
    return undefined;
  const permissions = ctx.runtime.store.toolPermissions;
  const sessionId = ctx.turn.sessionId;
  if (await permissions.granted(sessionId, tool.name)) return undefined;
  const now = permissions.now();
  let row = await permissions.request({
    sessionId,
    callId: call.id,
    tool: tool.name,
    summary: cap(call.function.arguments.replaceAll("\u0000", "\\u0000"), SUMMARY_BYTES),
    requestedAt: now,
    deadlineAt: now + (ctx.tools?.permissionTimeoutMs ?? 600_000),
  });
  if (row.decision === null) {
    ctx.events.onPermissionRequired?.(row);
    row = await waitForDecision(ctx, row);
  }
  return outcomeOf(row);
}

function outcomeOf(row: PermissionRow): ToolOutcome | undefined {
  switch (row.decision) {
    case "allow_once":
    case "allow_always":
      return undefined;
    case "reject":
      return { status: "denied", output: "denied: the user rejected this call; it did not run" };
    case "expired":
      return {
        status: "denied",
        output: "denied: nobody answered the permission request in time; it did not run",
      };
    default:
      return { status: "cancelled", output: "not run: the turn was cancelled" };
  }
}

/**
 * Wait until the request is decided: by the store (polled, and woken by
 * this process's own decisions), by the asker, by the deadline (recorded
 * `expired`) or by the turn stopping (recorded `cancelled`). The turn's
 * lease is renewed while it waits, so no other turn takes the session.
 */
async function waitForDecision(ctx: LoopContext, pending: PermissionRow): Promise<PermissionRow> {
  const permissions = ctx.runtime.store.toolPermissions;
  const { sessionId, callId } = pending;
  const asking = new AbortController();
  if (ctx.askPermission) {
    ctx.askPermission(pending, asking.signal).then(
      async (answer) => {
        await permissions.decide(sessionId, callId, answer ?? "cancelled");
        permissionDecided(sessionId, callId);
      },
      () => undefined, // no answer: the deadline or the turn's end decides
    );
  }
  const renewEvery = Math.max(1_000, Math.floor(ctx.leaseMs / 3));
  let renewedAt = Date.now();
  try {
    for (;;) {
      const row = await permissions.get(sessionId, callId);
      if (row?.decision) return row;
      const stopped = ctx.signal.aborted || ctx.stop?.aborted === true;
      const now = permissions.now();
      if (stopped || now >= pending.deadlineAt) {
        const settled = await permissions.decide(
          sessionId,
          callId,
          stopped ? "cancelled" : "expired",
        );
        if (settled?.decision) return settled;
      }
      if (Date.now() - renewedAt >= renewEvery) {
        await ctx.runtime.store.meta.compareAndSet(
          ctx.turn.key,
          acquireDecider(ctx.turn, ctx.leaseMs),
          leasePresence,
        );
        renewedAt = Date.now();
      }
      await wake(ctx, sessionId, callId, Math.min(POLL_MS, Math.max(1, pending.deadlineAt - now)));
    }
  } finally {
    asking.abort();
  }
}

/** Resolves after `ms`, on a decision of this process, or when the turn stops. */
function wake(ctx: LoopContext, sessionId: string, callId: string, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const key = wakeKey(sessionId, callId);
    const signals = [ctx.signal, ctx.stop].filter((s): s is StopSignal => s !== undefined);
    const done = () => {
      clearTimeout(timer);
      decided.off(key, done);
      for (const s of signals) s.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    decided.once(key, done);
    for (const s of signals) s.addEventListener("abort", done, { once: true });
  });
}
