import { HearthError, isHearthError } from "../errors.js";
import type { MetaCas } from "../store/meta.js";
import type { Message } from "../store/types.js";
import type { GroupCommitter } from "./group-commit.js";
import { cancelledError } from "./tool-loop.js";

/**
 * A turn that ends without a reply is still recorded: an assistant message
 * named `hearth.turn_failed` or `hearth.turn_cancelled` (committed with the
 * lease's release) marks where it stopped, so nothing is lost and the next
 * turn knows; text the client already saw streamed is kept in it (`partial`). Returns the error the caller throws, with the ids attached.
 */
export async function recordUnfinished(
  committer: GroupCommitter,
  sessionId: string,
  err: unknown,
  opts: {
    responder: string;
    cancelled: boolean;
    release: MetaCas;
    /** The inbound message of the turn, when there is one. */
    messageId?: number;
    /** The answer's text streamed to the client before the turn stopped, kept with the marker. */
    partial?: string | undefined;
  },
): Promise<{ error: HearthError; marker: Message }> {
  const error = opts.cancelled
    ? cancelledError(sessionId)
    : isHearthError(err)
      ? err
      : new HearthError(
          "HEARTH_RESPONDER_FAILED",
          `the responder failed: ${(err as Error).message}`,
          {
            cause: err,
          },
        );
  const marker = await committer.append(
    sessionId,
    {
      role: "assistant",
      name: opts.cancelled ? "hearth.turn_cancelled" : "hearth.turn_failed",
      content: {
        [opts.cancelled ? "turnCancelled" : "turnFailed"]: true,
        code: error.code,
        message: error.message,
        responder: opts.responder,
        ...(opts.partial ? { partial: opts.partial } : {}),
      },
    },
    { metaAfter: opts.release },
  );
  return {
    marker,
    error: new HearthError(error.code, error.message, {
      resource: sessionId,
      cause: err,
      details: {
        sessionId,
        ...(opts.messageId === undefined ? {} : { messageId: opts.messageId }),
        [opts.cancelled ? "cancelledTurnMessageId" : "failedTurnMessageId"]: marker.id,
      },
      ...(error.hint ? { hint: error.hint } : {}),
    }),
  };
}
