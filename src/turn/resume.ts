import type { Message } from "../store/types.js";
import {
  acquireAlone,
  isOrphanedLease,
  leaseKey,
  leasePresence,
  newTurn,
  releaseAlone,
  releaseDecider,
} from "./leases.js";
import { recordUnfinished } from "./outcome.js";
import type { ProfileRuntime, TurnDeps, TurnEvents } from "./run.js";
import { type FinalAnswer, toolLoop } from "./tool-loop.js";
import { endsMidLoop } from "./tool-records.js";

/**
 * Continue a turn that a dead process left inside its tool loop (D7): take
 * the session's lease (the dead holder's is taken over), settle the calls
 * without results, ask the model again, commit the reply. Returns the reply,
 * or undefined when the transcript does not end mid-loop (nothing to do).
 */
export async function resumeTurn(
  runtime: ProfileRuntime,
  sessionId: string,
  deps: TurnDeps,
  events: TurnEvents = {},
): Promise<Message | undefined> {
  const { store, committer } = runtime;
  const { leaseMs, turnWaitMs } = deps.config.gateway;
  // Most orphans (a turn killed before its tool loop) need nothing: look before taking the
  // lease, so a new turn on the session never waits behind a resume that does nothing.
  if (!endsMidLoop(await store.messages.tail(sessionId, 1))) return undefined;
  const turn = newTurn(sessionId);
  const release = { key: turn.key, decide: releaseDecider(turn) };
  await acquireAlone(store, turn, leaseMs, turnWaitMs);
  let held = true;
  try {
    const transcript = await store.messages.load(sessionId);
    if (!endsMidLoop(transcript)) return undefined;
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
          ...loopSignals(deps),
          events,
          streamed,
          askPermission: deps.askPermission,
        },
        transcript,
      );
    } catch (err) {
      const { error } = await recordUnfinished(committer, sessionId, err, {
        responder: deps.responder.name,
        cancelled: deps.signal.aborted || deps.stop?.aborted === true,
        release,
        partial: streamed.text,
      });
      held = false;
      throw error;
    }
    const reply = await committer.append(
      sessionId,
      { role: "assistant", ...answer },
      { metaAfter: release },
    );
    held = false;
    return reply;
  } finally {
    if (held) await releaseAlone(store, turn).catch(() => undefined);
  }
}

function loopSignals(deps: TurnDeps) {
  return { signal: deps.signal, stop: deps.stop };
}

/**
 * The sessions whose turn lease is held by a process that is provably dead:
 * the turns a crash interrupted. (A lease is released when its turn ends.)
 */
export async function orphanedTurns(runtime: ProfileRuntime): Promise<string[]> {
  const entries = await runtime.store.meta.entries();
  const prefix = leaseKey("");
  const leases = Object.entries(entries).filter(([key]) => key.startsWith(prefix));
  // On PostgreSQL the server says which holders are alive (their presence), on any host.
  const owners = leases.map(([, value]) => leasePresence.ownerOf(value));
  const alive = await runtime.store.meta.ownersAlive(
    owners.filter((o): o is string => o !== undefined),
  );
  const now = Date.now();
  return leases
    .filter(([, value]) => isOrphanedLease(value, now, alive))
    .map(([key]) => key.slice(prefix.length));
}

/** Resume every orphaned turn that ended mid-loop, concurrently (a process starting up calls this). */
export async function resumeOrphanedTurns(
  runtime: ProfileRuntime,
  deps: TurnDeps,
  log: {
    info(event: Record<string, unknown>, message: string): void;
    warn(event: Record<string, unknown>, message: string): void;
  },
): Promise<number> {
  let resumed = 0;
  // Side by side: a turn that waits for a person's permission holds up no other.
  const resume = async (sessionId: string) => {
    try {
      const reply = await resumeTurn(runtime, sessionId, deps);
      if (!reply) return;
      resumed++;
      log.info(
        { event: "turn.resumed", profile: runtime.profile, session: sessionId, reply: reply.id },
        "an interrupted turn was resumed and finished",
      );
    } catch (err) {
      log.warn(
        {
          event: "turn.resume_failed",
          profile: runtime.profile,
          session: sessionId,
          error: (err as Error).message,
        },
        "an interrupted turn could not be resumed; its steps so far are stored",
      );
    }
  };
  let orphaned: string[];
  try {
    orphaned = await orphanedTurns(runtime);
  } catch (err) {
    // A background sweep (the gateway does not await it): a failure here
    // (PostgreSQL ending the connection at start, a store closing) must not
    // end the process. Nothing is lost: each interrupted turn is finished
    // by the next message to its session, whoever receives it.
    log.warn(
      {
        event: "turn.resume_sweep_failed",
        profile: runtime.profile,
        error: (err as Error).message,
      },
      "interrupted turns were not looked for; each is finished when its session is next used",
    );
    return 0;
  }
  await Promise.all(orphaned.map(resume));
  return resumed;
}
