// A client that reads one whole transcript (GET /v1/sessions/:id) over and
// over, discarding the body, until told to stop: the "another client reads a
// 100,000-message session" load of workload 10. Argument: {}.
import http from "node:http";
import { serve } from "../lib/procs.mjs";

let running = false;
let reads = 0;
let bytes = 0;
let loop;

function read(url) {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        res.on("data", (d) => {
          bytes += d.length;
        });
        res.on("end", () =>
          res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`)),
        );
      })
      .on("error", reject);
  });
}

serve({
  async start({ address, sessionId }) {
    running = true;
    reads = 0;
    bytes = 0;
    const url = new URL(`/v1/sessions/${encodeURIComponent(sessionId)}`, address);
    loop = (async () => {
      while (running) {
        await read(url);
        reads++;
      }
    })();
    return true;
  },
  async stop() {
    running = false;
    await loop;
    return { reads, bytes };
  },
});
