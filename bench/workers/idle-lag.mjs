// The noise floor of event-loop lateness: a process that does nothing but
// sample its own loop every 10 ms. {"op":"start"} starts sampling;
// {"op":"stop"} answers the largest lateness since start.
import { lagMonitor, serve } from "../lib/procs.mjs";

let lag;
serve({
  start() {
    lag = lagMonitor();
    return true;
  },
  stop() {
    return Math.max(0, ...lag.stop().map((s) => s.lateMs));
  },
});
