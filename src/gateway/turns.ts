import type { HearthConfig } from "../config/schema.js";
import { HearthError, isHearthError } from "../errors.js";
import type { Store } from "../store/store.js";
import type { Message, Session } from "../store/types.js";
import type { GroupCommitter } from "./group-commit.js";
import { acquireTurnLease } from "./leases.js";
import type { GatewayMetrics } from "./metrics.js";
import type { Responder } from "./responder.js";

/** One profile the gateway serves. */
export interface ProfileRuntime {
  profile: string;
  store: Store;
  committer: GroupCommitter;
}

export interface InboundMessage {
  platform: string;
  chat: string;
  content: string;
  clientId?: string | undefined;
}

export interface TurnResult {
  session: Session;
  message: Message;
  reply: Message;
}

export interface TurnEvents {
  /** The inbound message is committed (acknowledged). */
  onStored?: (message: Message, session: Session) => void;
  onDelta?: (text: string) => void;
}

/**
 * Inbound message → session resolved or created → message committed →
 * agent turn under the session's lease → reply committed. A responder
 * failure is committed too, as an assistant message marking the failed
 * turn, before the error is returned: never lost, never a crash.
 */
export async function runTurn(
  runtime: ProfileRuntime,
  inbound: InboundMessage,
  deps: {
    responder: Responder;
    config: HearthConfig;
    metrics: GatewayMetrics;
    signal: AbortSignal;
  },
  events: TurnEvents = {},
): Promise<TurnResult> {
  const { store, committer, profile } = runtime;
  const session = await store.sessions.resolveChat(inbound.platform, inbound.chat);
  const release = await acquireTurnLease(store, session.id, {
    leaseMs: deps.config.gateway.leaseMs,
    waitMs: deps.config.gateway.turnWaitMs,
  });
  deps.metrics.inFlight.inc();
  try {
    const message = await committer.append(session.id, {
      role: "user",
      content: inbound.content,
      clientId: inbound.clientId ?? null,
    });
    deps.metrics.acknowledged.inc({ profile, role: "user" });
    events.onStored?.(message, session);
    const transcript = await store.messages.load(session.id);
    let content: string;
    try {
      ({ content } = await deps.responder.respond({
        transcript,
        signal: deps.signal,
        ...(events.onDelta ? { onDelta: events.onDelta } : {}),
      }));
    } catch (err) {
      const error = isHearthError(err)
        ? err
        : new HearthError(
            "HEARTH_RESPONDER_FAILED",
            `the responder failed: ${(err as Error).message}`,
            { cause: err },
          );
      const failed = await committer.append(session.id, {
        role: "assistant",
        name: "hearth.turn_failed",
        content: {
          turnFailed: true,
          code: error.code,
          message: error.message,
          responder: deps.responder.name,
        },
      });
      deps.metrics.turns.inc({ profile, outcome: "failed" });
      throw new HearthError(error.code, error.message, {
        resource: session.id,
        cause: err,
        details: { sessionId: session.id, messageId: message.id, failedTurnMessageId: failed.id },
        ...(error.hint ? { hint: error.hint } : {}),
      });
    }
    const reply = await committer.append(session.id, { role: "assistant", content });
    deps.metrics.acknowledged.inc({ profile, role: "assistant" });
    deps.metrics.turns.inc({ profile, outcome: "ok" });
    return { session: (await store.sessions.get(session.id)) ?? session, message, reply };
  } finally {
    deps.metrics.inFlight.dec();
    await release();
  }
}
