import type { HearthConfig } from "../config/schema.js";
import { isHearthError } from "../errors.js";
import type { Store } from "../store/api.js";
import { isFreshInsert } from "../store/message-write.js";
import type { MetaCas } from "../store/meta.js";
import type { Message, Session } from "../store/types.js";
import { autoTitle } from "./auto-title.js";
import type { ChatSessions, RememberedSession } from "./chat-sessions.js";
import { compactSession } from "./compaction.js";
import type { GroupCommitter } from "./group-commit.js";
import {
  acquireAlone,
  acquireCas,
  newTurn,
  releaseAlone,
  releaseDecider,
  releaseInBackground,
  waitForTurn,
} from "./leases.js";
import { recordUnfinished } from "./outcome.js";
import type { PermissionAsker } from "./permission.js";
import type { Responder } from "./responder.js";
import { resumeTurn } from "./resume.js";
import type { StopSignal } from "./stop.js";
import { cancelledError, type FinalAnswer, type LoopEvents, toolLoop } from "./tool-loop.js";
import type { ToolRegistry } from "./tools/registry.js";

/**
 * What a turn reports as it goes, for a process that keeps metrics (the
 * gateway's Prometheus counters fit this shape); optional.
 */
export interface TurnMetrics {
  inFlight: { inc(): void; dec(): void };
  turns: { inc(labels: { profile: string; outcome: string }): void };
  acknowledged: { inc(labels: { profile: string; role: string }): void };
}

/** One profile a process runs turns on: its store and how its appends are committed. */
export interface ProfileRuntime {
  profile: string;
  store: Store;
  committer: GroupCommitter;
  /**
   * The chats' open sessions this process remembers between turns (a
   * gateway, on either backend); each use is checked in the append's
   * transaction.
   * Absent: every turn looks its chat up.
   */
  chats?: ChatSessions | undefined;
}

export interface InboundMessage {
  platform: string;
  chat: string;
  /** Continue this session (an ACP editor names it) instead of resolving platform + chat. */
  sessionId?: string | undefined;
  content: string;
  clientId?: string | undefined;
}

export interface TurnResult {
  session: Session;
  message: Message;
  reply: Message;
}

export interface TurnEvents extends LoopEvents {
  /** The inbound message is committed (acknowledged). */
  onStored?: (message: Message, session: Session) => void;
  /**
   * The events of an interrupted earlier turn this one finishes before its
   * own (an editor shows them); that turn runs silently when absent.
   */
  resumed?: LoopEvents;
}

export interface TurnDeps {
  responder: Responder;
  config: HearthConfig;
  /** The tools offered to the model; none when absent. */
  tools?: ToolRegistry | undefined;
  metrics?: TurnMetrics;
  /** Aborts the turn where it is (shutdown, a cancelled editor prompt). */
  signal: AbortSignal;
  /** Stops the turn at its next step (a client that disconnected, a drain). */
  stop?: StopSignal | undefined;
  /** Asks a person for a tool's permission directly (ACP); else the turn waits for a decision in the store. */
  askPermission?: PermissionAsker | undefined;
  /** Where cleanup that failed without failing the turn is reported (warn). */
  log?: {
    warn(event: Record<string, unknown>, message: string): void;
    info?(event: Record<string, unknown>, message: string): void;
  };
}

/**
 * Inbound message → session resolved or created → message committed →
 * agent turn under the session's lease (the model/tool loop, each step
 * committed) → reply committed. A failed or cancelled turn is committed too,
 * as an assistant message marking it, before the error is returned: never
 * lost, never a crash.
 */
export async function runTurn(
  runtime: ProfileRuntime,
  inbound: InboundMessage,
  deps: TurnDeps,
  events: TurnEvents = {},
): Promise<TurnResult> {
  const chats = inbound.sessionId ? undefined : runtime.chats;
  // A streamed turn shows its session at once (onStored): as it is now, not as remembered.
  const remembered = events.onStored ? undefined : chats?.get(inbound.platform, inbound.chat);
  // Over the compaction budget, the turn reads the session as it is now.
  if (remembered && remembered.messageCount < deps.config.gateway.compactAfterMessages) {
    try {
      return await turnOn(runtime, remembered, inbound, deps, events, true);
    } catch (err) {
      if (!isHearthError(err, "HEARTH_CHAT_MOVED")) throw err;
      // Ended, deleted or replaced by another process: nothing was written; look again.
      chats?.forget(inbound.platform, inbound.chat);
    }
  }
  const session = inbound.sessionId
    ? await runtime.store.sessions.require(inbound.sessionId)
    : await runtime.store.sessions.resolveChat(inbound.platform, inbound.chat);
  return turnOn(runtime, session, inbound, deps, events, false);
}

/**
 * The turn on `session`. `remembered`: the session comes from
 * runtime.chats, and the inbound message is stored only while it is still
 * the chat's open session (else HEARTH_CHAT_MOVED, nothing written).
 */
async function turnOn(
  runtime: ProfileRuntime,
  session: Session | RememberedSession,
  inbound: InboundMessage,
  deps: TurnDeps,
  events: TurnEvents,
  remembered: boolean,
): Promise<TurnResult> {
  const { store, committer, profile } = runtime;
  const { leaseMs, turnWaitMs, compactAfterMessages } = deps.config.gateway;
  const openChat = remembered ? { platform: inbound.platform, chatKey: inbound.chat } : undefined;
  const turn = newTurn(session.id);
  const lease = acquireCas(turn, leaseMs);
  const release = { key: turn.key, decide: releaseDecider(turn) };
  let held = false;
  deps.metrics?.inFlight.inc();
  try {
    const user = {
      role: "user" as const,
      content: inbound.content,
      clientId: inbound.clientId ?? null,
    };
    let message: Message;
    // From the claim on, the lease may be this turn's: a claim whose COMMIT
    // reply was lost (the connection dropped as it committed) fails although
    // it landed. Only HEARTH_TURN_BUSY proves it did not; after any other
    // failure the finally below reads the lease back and releases it if it
    // is this turn's, so no chat stays held by a turn that is not running.
    held = true;
    const claim = <T>(attempt: Promise<T>) =>
      attempt.catch((err: unknown) => {
        // Both refusals roll the item's savepoint back, the lease's claim with it.
        if (isHearthError(err, "HEARTH_TURN_BUSY") || isHearthError(err, "HEARTH_CHAT_MOVED"))
          held = false;
        throw err;
      });
    if (session.messageCount >= compactAfterMessages) {
      // Over budget: compact first, under the lease, before the transcript grows further.
      await claim(acquireAlone(store, turn, leaseMs, turnWaitMs));
      await compactSession(store, session.id, deps).catch((err: Error) => {
        // The turn goes on with the uncompacted transcript; nothing was archived.
        deps.metrics?.turns.inc({ profile, outcome: "compaction_failed" });
        deps.log?.warn(
          { event: "session.compaction_failed", profile, session: session.id, error: err.message },
          "compaction failed; the transcript was left as it was",
        );
      });
      message = await committer.append(session.id, user);
    } else {
      // The lease is taken in the same transaction that stores the message.
      const append = (cas: MetaCas) =>
        claim(
          waitForTurn(
            turnWaitMs,
            () => committer.append(session.id, user, { metaBefore: cas, openChat }),
            // Cancelled or stopped while it waits for the session: its message is never stored.
            [deps.signal, deps.stop],
            () => cancelledError(session.id),
          ),
        );
      try {
        message = await append(acquireCas(turn, leaseMs, { refuseOrphan: true }));
      } catch (err) {
        if (!isHearthError(err, "HEARTH_TURN_INTERRUPTED")) throw err;
        // A crash interrupted this session's last turn (any process's): finish
        // it first, so its question is answered before the new one is stored.
        held = false;
        await finishInterrupted(runtime, session.id, deps, events);
        held = true;
        message = await append(lease);
      }
    }
    deps.metrics?.acknowledged.inc({ profile, role: "user" });
    // A streamed turn never runs on a remembered session (runTurn): no read here in practice.
    if (events.onStored) events.onStored(message, await wholeSession(store, session));
    // A retry (same clientId) of a message whose turn already answered (the
    // client never got the answer: a gateway killed after the commit, a cut
    // connection): that reply, not a second turn. A message this append
    // stored fresh has no answer yet: the read is spared.
    const answered =
      inbound.clientId && !isFreshInsert(message)
        ? await replyTo(store, session.id, message)
        : undefined;
    if (answered) {
      await releaseAlone(store, turn);
      held = false;
      deps.metrics?.turns.inc({ profile, outcome: "replayed" });
      return {
        session: (await store.sessions.get(session.id)) ?? (await wholeSession(store, session)),
        message,
        reply: answered,
      };
    }
    // A responder that reads only the new message spares the transcript load.
    const transcript =
      deps.responder.context === "last" ? [message] : await store.messages.load(session.id);
    let answer: FinalAnswer;
    const streamed = { text: "" };
    try {
      answer = await toolLoop(
        {
          runtime,
          turn,
          leaseMs,
          responder: deps.responder,
          tools: deps.tools,
          signal: deps.signal,
          stop: deps.stop,
          events,
          streamed,
          askPermission: deps.askPermission,
        },
        transcript,
      );
    } catch (err) {
      const cancelled = deps.signal.aborted || deps.stop?.aborted === true;
      const { error } = await recordUnfinished(committer, session.id, err, {
        responder: deps.responder.name,
        cancelled,
        release,
        messageId: message.id,
        partial: streamed.text,
      });
      held = false;
      deps.metrics?.turns.inc({ profile, outcome: cancelled ? "cancelled" : "failed" });
      throw error;
    }
    // The reply and the release of the lease commit together.
    const stored = await committer.appendReporting(
      session.id,
      { role: "assistant", ...answer },
      { metaAfter: release, withSession: true },
    );
    const reply = stored.message;
    held = false;
    deps.metrics?.acknowledged.inc({ profile, role: "assistant" });
    deps.metrics?.turns.inc({ profile, outcome: "ok" });
    // The first exchange names an untitled session (issue 47): after the reply, never awaited.
    // Only an untitled session's first exchange is looked at (autoTitle checks it again).
    if (session.title === null && session.messageCount === 0)
      void titleSession(deps, runtime, session, inbound.content, answer.content);
    // The session as the reply's commit left it, when the commit read it (no round trip).
    const after =
      stored.session ??
      (await store.sessions.get(session.id)) ??
      (await wholeSession(store, session));
    // The next turn on this chat starts from here (checked again when it appends).
    if (!inbound.sessionId) runtime.chats?.set(inbound.platform, inbound.chat, after);
    return { session: after, message, reply };
  } finally {
    deps.metrics?.inFlight.dec();
    if (held) {
      await releaseAlone(store, turn).catch((err: Error) => {
        // Retried in the background until it lands (or the lease expires by
        // itself after gateway.leaseMs): the session's next turn waits until then.
        deps.log?.warn(
          { event: "turn.lease_release_failed", profile, session: session.id, error: err.message },
          "the turn lease was not released; retrying until it is (it expires after gateway.leaseMs)",
        );
        releaseInBackground(store, turn, Date.now() + leaseMs);
      });
    }
  }
}

/** The session itself when the turn has it whole, else read (a remembered one: id, title, count). */
async function wholeSession(store: Store, session: Session | RememberedSession): Promise<Session> {
  return "profile" in session ? session : store.sessions.require(session.id);
}

/**
 * Finish the turn a crash left inside its tool loop on this session. Its
 * failure is recorded in its transcript (by resumeTurn) and does not stop
 * the new turn, unless the new turn itself was cancelled or the session is
 * busy with a live turn after all.
 */
async function finishInterrupted(
  runtime: ProfileRuntime,
  sessionId: string,
  deps: TurnDeps,
  events: TurnEvents,
): Promise<void> {
  try {
    const reply = await resumeTurn(runtime, sessionId, deps, events.resumed ?? {});
    if (reply)
      deps.log?.warn(
        { event: "turn.resumed", profile: runtime.profile, session: sessionId, reply: reply.id },
        "an interrupted turn was finished before the new message",
      );
  } catch (err) {
    if (deps.signal.aborted || deps.stop?.aborted || isHearthError(err, "HEARTH_TURN_BUSY"))
      throw err;
    deps.log?.warn(
      {
        event: "turn.resume_failed",
        profile: runtime.profile,
        session: sessionId,
        error: (err as Error).message,
      },
      "an interrupted turn could not be finished; its steps so far are stored",
    );
  }
}

/**
 * The reply that already answers `message`: the first final assistant
 * message after it (no tool calls, not a failure or cancellation record),
 * before any later user message. Undefined while the turn never finished.
 */
async function replyTo(
  store: Store,
  sessionId: string,
  message: Message,
): Promise<Message | undefined> {
  const after = await store.messages.load(sessionId, { afterOrdinal: message.ordinal, limit: 200 });
  for (const m of after) {
    if (m.role === "user") return undefined;
    if (m.role === "assistant" && !m.toolCalls?.length && !m.name?.startsWith("hearth.")) return m;
  }
  return undefined;
}

/**
 * The first exchange names an untitled session (auto-title.ts), in the
 * background: a model's title is logged as `session.titled`, a model that
 * failed as `session.model_title_failed` (the heuristic titles it then).
 */
async function titleSession(
  deps: TurnDeps,
  runtime: ProfileRuntime,
  session: RememberedSession,
  question: unknown,
  reply: string,
): Promise<void> {
  const base = { profile: runtime.profile, session: session.id };
  try {
    const by = await autoTitle(runtime.store, session, question, {
      responder: deps.responder,
      reply,
      // The process stopping, not the client leaving: the reply is already sent.
      signal: deps.signal,
      onModelFailed: (err) =>
        deps.log?.warn(
          { event: "session.model_title_failed", ...base, error: err.message },
          "the model gave no title; the first message's words title the session",
        ),
    });
    if (by === "kept")
      deps.log?.info?.({ event: "session.title_kept", ...base }, "a person's title stays");
    else if (by)
      deps.log?.info?.({ event: "session.titled", ...base, titledBy: by }, "session titled");
  } catch (err) {
    deps.log?.warn(
      { event: "session.auto_title_failed", ...base, error: (err as Error).message },
      "the session keeps no automatic title",
    );
  }
}
