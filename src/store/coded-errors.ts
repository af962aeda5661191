import { fromSqliteError, isSqliteError } from "../sqlite-errors.js";
import { abortedError } from "./api.js";
import { markMisuse } from "./args.js";

/** The door every store call passes (maintenance windows park it). */
export interface Door {
  /** undefined: go ahead now; a promise: wait for it (it rejects when the wait is too long). */
  enter(): Promise<void> | undefined;
  leave(): void;
}

/**
 * The store's door for one API object. Every call passes it: while the
 * process is parked for a maintenance window (M5) the call waits, bounded;
 * calls in flight are counted, so a park waits for them. And one error
 * policy: whatever a store API throws or rejects with, reads included,
 * reaches the caller as a coded HearthError (SQLite's own errors become
 * HEARTH_BUSY or HEARTH_SQLITE with the extended code kept as the cause).
 * API misuse (TypeError, RangeError) keeps its class and gains the code
 * HEARTH_INVALID_ARG, thrown synchronously or rejected; HearthErrors pass
 * through.
 */
export function codedErrors<T extends object>(api: T, resource: string, door?: Door): T {
  const wrappers = new Map<PropertyKey, unknown>();
  const code = (err: unknown) => codeError(err, resource);
  return new Proxy(api, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      let wrapped = wrappers.get(prop);
      if (!wrapped) {
        const method = value as (...args: unknown[]) => unknown;
        const call = (args: unknown[]): unknown => {
          let result: unknown;
          try {
            result = method.apply(target, args);
          } catch (err) {
            door?.leave();
            throw code(err);
          }
          if (!(result instanceof Promise)) {
            door?.leave();
            return result;
          }
          return result.then(
            (value) => {
              door?.leave();
              return value;
            },
            (err: unknown) => {
              door?.leave();
              throw code(err);
            },
          );
        };
        wrapped = (...args: unknown[]) => {
          let waiting: Promise<void> | undefined;
          try {
            waiting = door?.enter();
          } catch (err) {
            // A closed store: the call rejects like any other, never throws synchronously.
            return Promise.reject(code(err));
          }
          if (!waiting) return call(args);
          const signal = signalOf(args);
          return (signal && door ? abortable(waiting, signal, door) : waiting).then(() =>
            call(args),
          );
        };
        wrappers.set(prop, wrapped);
      }
      return wrapped;
    },
  });
}

/**
 * The store's error policy for one thrown value: SQLite's errors become
 * coded HearthErrors, misuse (TypeError, RangeError) is tagged
 * HEARTH_INVALID_ARG (the same object), anything else is returned as it is.
 */
export function codeError(err: unknown, resource: string): unknown {
  return isSqliteError(err) ? fromSqliteError(err, resource) : markMisuse(err);
}

/** The AbortSignal a call was given: `{ signal }` in its last argument. */
function signalOf(args: unknown[]): AbortSignal | undefined {
  const last = args[args.length - 1] as { signal?: unknown } | null | undefined;
  const signal = last !== null && typeof last === "object" ? last.signal : undefined;
  return signal instanceof AbortSignal ? signal : undefined;
}

/**
 * A wait at a parked door that the caller's signal can end: the call then
 * rejects with HEARTH_ABORTED and never runs. When the window ends later,
 * the door let the call in: it leaves at once, so nothing stays counted.
 */
function abortable(waiting: Promise<void>, signal: AbortSignal, door: Door): Promise<void> {
  return new Promise((resolve, reject) => {
    let gaveUp = false;
    const onAbort = () => {
      gaveUp = true;
      reject(abortedError(signal));
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    waiting.then(
      () => {
        signal.removeEventListener("abort", onAbort);
        if (gaveUp) door.leave();
        else resolve();
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        if (!gaveUp) reject(err);
      },
    );
  });
}

/** An async generator whose SQLite errors are coded like the rest of the store's, counted at the door while it runs. */
export async function* codedGenerator<T>(
  source: () => AsyncGenerator<T>,
  resource: string,
  door?: Door,
): AsyncGenerator<T> {
  const waiting = door?.enter();
  if (waiting) await waiting;
  try {
    yield* source();
  } catch (err) {
    throw codeError(err, resource);
  } finally {
    door?.leave();
  }
}
