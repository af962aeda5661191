// The noise floor of event-loop lateness: a process that does nothing but
// sample its own loop every 10 ms (bench/lib/loop-lag.mjs pins one to each
// CPU). {"op":"start"} starts sampling; {"op":"stop"} answers { late, restMs }:
// the late samples since start, with their CPU and scheduler times, and the
// largest lateness of the others (lateSamples).
import { lagMonitor, lateSamples } from "../lib/loop-lag.mjs";
import { serve } from "../lib/procs.mjs";

let lag;
serve({
  start() {
    lag = lagMonitor();
    return true;
  },
  stop() {
    return lateSamples(lag.stop());
  },
});
