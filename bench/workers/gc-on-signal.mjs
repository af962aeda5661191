// Preloaded into the gateway of workload 14 (node --expose-gc --import):
// SIGUSR2 runs a full garbage collection and prints {"event":"bench.gc","n"}
// on stdout, so the resident set read after it holds what the process
// keeps, not garbage not yet collected. Adds nothing else to the process;
// the gateway itself exposes no GC.
let n = 0;
process.on("SIGUSR2", () => {
  globalThis.gc?.();
  n++;
  process.stdout.write(`${JSON.stringify({ event: "bench.gc", n, gc: typeof globalThis.gc })}\n`);
});
