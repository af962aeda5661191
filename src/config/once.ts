/**
 * `build()`'s result, made on the first call and kept. The config's schemas
 * are built this way, each section on its own: building every zod object of
 * the schema was most of what a configured home's CLI command paid for its
 * configuration, and a file that sets `gateway.port` needs only the
 * gateway's (validate.ts; docs/benchmarks.md, workload 12).
 */
export function once<T>(build: () => T): () => T {
  let built: { value: T } | undefined;
  return () => {
    built ??= { value: build() };
    return built.value;
  };
}
