import { HearthError, type HearthErrorCode, isHearthError } from "../../errors.js";

/** The operations a reader thread runs, by name. */
export type ReaderOp = "search" | "messages.load" | "export.step";

/** Main thread → reader thread. */
export type ToThread =
  | { type: "run"; id: number; key: string; op: ReaderOp; args: unknown[] }
  | { type: "close" };

/** Reader thread → main thread. */
export type FromThread =
  | { type: "done"; id: number; value: unknown }
  | { type: "failed"; id: number; error: WireError }
  | { type: "closed" };

/** An error as it crosses the thread boundary: a HearthError keeps its code, hint and details. */
export interface WireError {
  name: string;
  message: string;
  code?: HearthErrorCode;
  resource?: string;
  hint?: string;
  details?: Record<string, unknown>;
}

export function toWire(err: unknown): WireError {
  if (isHearthError(err)) {
    return {
      name: err.name,
      message: err.message,
      code: err.code,
      ...(err.resource === undefined ? {} : { resource: err.resource }),
      ...(err.hint === undefined ? {} : { hint: err.hint }),
      ...(err.details === undefined ? {} : { details: err.details }),
    };
  }
  const e = err instanceof Error ? err : new Error(String(err));
  return { name: e.name, message: e.message };
}

/** The same kind of error the call would have thrown had it run on the caller's thread. */
export function fromWire(wire: WireError): Error {
  if (wire.code) {
    return new HearthError(wire.code, wire.message, {
      ...(wire.resource === undefined ? {} : { resource: wire.resource }),
      ...(wire.hint === undefined ? {} : { hint: wire.hint }),
      ...(wire.details === undefined ? {} : { details: wire.details }),
    });
  }
  if (wire.name === "TypeError") return new TypeError(wire.message);
  if (wire.name === "RangeError") return new RangeError(wire.message);
  return new HearthError("HEARTH_INTERNAL", `internal error in a reader thread: ${wire.message}`, {
    hint: "this is a bug in hearth: report it with the message and what you ran",
  });
}
