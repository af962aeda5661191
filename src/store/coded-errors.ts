import { fromSqliteError, isSqliteError } from "../errors.js";

/**
 * One error policy at the store's door: whatever a store API throws or
 * rejects with, reads included, reaches the caller as a coded HearthError
 * (SQLite's own errors become HEARTH_BUSY or HEARTH_SQLITE with the extended
 * code kept as the cause). API misuse (TypeError, RangeError) and
 * HearthErrors pass through unchanged.
 */
export function codedErrors<T extends object>(api: T, resource: string): T {
  const wrappers = new Map<PropertyKey, unknown>();
  const code = (err: unknown) => (isSqliteError(err) ? fromSqliteError(err, resource) : err);
  return new Proxy(api, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      let wrapped = wrappers.get(prop);
      if (!wrapped) {
        const method = value as (...args: unknown[]) => unknown;
        wrapped = (...args: unknown[]) => {
          let result: unknown;
          try {
            result = method.apply(target, args);
          } catch (err) {
            throw code(err);
          }
          return result instanceof Promise
            ? result.catch((err: unknown) => {
                throw code(err);
              })
            : result;
        };
        wrappers.set(prop, wrapped);
      }
      return wrapped;
    },
  });
}

/** An async generator whose SQLite errors are coded like the rest of the store's. */
export async function* codedGenerator<T>(
  source: AsyncGenerator<T>,
  resource: string,
): AsyncGenerator<T> {
  try {
    yield* source;
  } catch (err) {
    throw isSqliteError(err) ? fromSqliteError(err, resource) : err;
  }
}
