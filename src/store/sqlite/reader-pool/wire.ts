import { HearthError, type HearthErrorCode, isHearthError } from "../../../errors.js";

/** The operations a reader thread runs, by name. */
export type ReaderOp = "search" | "messages.load" | "messages.loadJson" | "export.step";

/**
 * The operations whose answer is a stream of byte parts: the thread reads
 * the rows, answers `stream`, then builds and sends one part per `pull`.
 */
export type StreamOp = "messages.loadJsonParts";

/**
 * A long array result crosses in parts of this many items, one message
 * each, the next sent when the receiver asks for it (after an event-loop
 * turn of its own): a 100,000-message transcript never arrives as one long
 * stall. (Messages already queued on a port are all delivered in one turn,
 * hence the asking.)
 */
export const PART = 2000;

/** Main thread → reader thread. */
export type ToThread =
  | { type: "run"; id: number; key: string; op: ReaderOp | StreamOp; args: unknown[] }
  | { type: "next"; id: number }
  | { type: "pull"; id: number }
  /** A part's memory handed back (transferred) for the thread to reuse. */
  | { type: "give"; buffer: ArrayBuffer }
  | { type: "cancel"; id: number }
  | { type: "close" };

/** Reader thread → main thread. */
export type FromThread =
  | { type: "part"; id: number; items: unknown[] }
  | { type: "done"; id: number; value: unknown; parts?: true }
  | { type: "failed"; id: number; error: WireError }
  | { type: "stream"; id: number }
  | { type: "chunk"; id: number; bytes?: Uint8Array }
  | { type: "closed" };

/** An error as it crosses the thread boundary: a HearthError keeps its code, hint and details. */
export interface WireError {
  name: string;
  message: string;
  code?: HearthErrorCode;
  resource?: string;
  hint?: string;
  details?: Record<string, unknown>;
  /** SQLite's extended code, when SQLite raised it. */
  sqliteCode?: string;
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
      ...(err.sqliteCode === undefined ? {} : { sqliteCode: err.sqliteCode }),
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
      // The cause carries SQLite's code, as on the caller's thread (HearthError.sqliteCode).
      ...(wire.sqliteCode === undefined
        ? {}
        : { cause: Object.assign(new Error(wire.message), { code: wire.sqliteCode }) }),
    });
  }
  if (wire.name === "TypeError") return new TypeError(wire.message);
  if (wire.name === "RangeError") return new RangeError(wire.message);
  return new HearthError("HEARTH_INTERNAL", `internal error in a reader thread: ${wire.message}`, {
    hint: "this is a bug in hearth: report it with the message and what you ran",
  });
}
