import { HearthError, type HearthErrorCode } from "../errors.js";

/**
 * An abort signal that fires when `parent` does or after `ms`. A plain
 * timer, not AbortSignal.timeout inside AbortSignal.any: on Node 20 that
 * timeout can be garbage-collected before it fires (nodejs/node#57736).
 */
export function deadline(
  parent: AbortSignal,
  ms: number,
  message: string,
  code: HearthErrorCode = "HEARTH_RESPONDER_FAILED",
): { signal: AbortSignal; done: () => void } {
  const controller = new AbortController();
  const onAbort = () => controller.abort(parent.reason);
  if (parent.aborted) controller.abort(parent.reason);
  else parent.addEventListener("abort", onAbort, { once: true });
  const timer = setTimeout(
    () =>
      controller.abort(
        new HearthError(code, message, { hint: "the other end did not answer in time" }),
      ),
    ms,
  );
  return {
    signal: controller.signal,
    done: () => {
      clearTimeout(timer);
      parent.removeEventListener("abort", onAbort);
    },
  };
}
