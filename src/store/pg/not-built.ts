import { HearthError } from "../../errors.js";

/**
 * A stand-in for a PostgreSQL module built on another branch (pg-modules):
 * every method refuses with HEARTH_INTERNAL until the real file replaces it.
 */
export function notBuilt<T>(module: string): T {
  const refuse = () => {
    throw new HearthError("HEARTH_INTERNAL", `not built yet: the PostgreSQL ${module} module`);
  };
  // Not a thenable, and nothing to close: the store's close() asks every module.
  const absent = new Set<string | symbol>(["then", "close"]);
  return new Proxy({}, { get: (_t, prop) => (absent.has(prop) ? undefined : refuse) }) as T;
}
