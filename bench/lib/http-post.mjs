// POST a JSON body over keep-alive node:http (the lightest client in Node),
// for the client workers of workloads 3, 8 and 14.
import http from "node:http";

let agent;
let agentFor;
/** One keep-alive agent per server; the previous server's sockets are closed. */
function agentOf(address) {
  if (agentFor !== address) {
    agent?.destroy();
    agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
    agentFor = address;
  }
  return agent;
}

/** Close the keep-alive sockets. */
export function closeAgent() {
  agent?.destroy();
  agent = undefined;
  agentFor = undefined;
}

/** Resolves with { status, text } (text only when the status is not 200). */
export function post(address, path, body) {
  const url = new URL(path, address);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        agent: agentOf(address),
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
        },
      },
      (res) => {
        const chunks = [];
        res.on("data", (d) => chunks.push(d));
        res.on("end", () =>
          resolve({
            status: res.statusCode,
            text: res.statusCode === 200 ? "" : Buffer.concat(chunks).toString(),
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}
