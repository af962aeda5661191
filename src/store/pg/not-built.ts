import { HearthError } from "../../errors.js";

/**
 * A stand-in for a PostgreSQL module built on another branch (pg-modules):
 * every method refuses with HEARTH_INTERNAL until the real file replaces it.
 */
export function notBuilt<T>(module: string): T {
  const refuse = () => {
    throw new HearthError("HEARTH_INTERNAL", `not built yet: the PostgreSQL ${module} module`);
  };
  return new Proxy({}, { get: (_t, prop) => (prop === "then" ? undefined : refuse) }) as T;
}
