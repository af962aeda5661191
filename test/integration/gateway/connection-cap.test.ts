/**
 * gateway.maxConnectionsPerClient: one client address holding idle
 * connections cannot take the whole gateway.maxConnections and starve the
 * others. Two clients are two loopback source addresses (127.0.0.2 and
 * 127.0.0.3), real sockets on a real gateway.
 */
import { request as httpRequest } from "node:http";
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type GatewayChild, startGateway, writeConfig } from "../../helpers/gateway.js";
import { cleanupHomes, tempHome } from "../../helpers/home.js";
import { until } from "../../helpers/process.js";

const sockets: Socket[] = [];
let gateway: GatewayChild | undefined;
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await gateway?.kill("SIGKILL");
  gateway = undefined;
  cleanupHomes();
});

/** A connection from `localAddress` that starts a request and never finishes its headers. */
function stalled(
  gw: GatewayChild,
  localAddress: string,
): { socket: Socket; closed: () => boolean } {
  const url = new URL(gw.address);
  let closed = false;
  const socket = connect({ port: Number(url.port), host: url.hostname, localAddress });
  socket.on("error", () => undefined);
  socket.on("close", () => {
    closed = true;
  });
  socket.once("connect", () => socket.write("GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
  sockets.push(socket);
  return { socket, closed: () => closed };
}

function health(gw: GatewayChild, localAddress: string): Promise<number> {
  const url = new URL(gw.address);
  return new Promise((resolve) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: "/v1/health", localAddress, agent: false },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", () => resolve(0));
    req.end();
  });
}

describe("gateway.maxConnectionsPerClient", () => {
  it("closes one address's connections beyond its cap at once; another address is still answered", async () => {
    const home = tempHome();
    writeConfig(home, { gateway: { port: 0, maxConnections: 24, maxConnectionsPerClient: 6 } });
    gateway = await startGateway(home);
    const greedy = Array.from({ length: 30 }, () => stalled(gateway!, "127.0.0.2"));
    await until(
      "every connection beyond the per-client cap is closed",
      () => greedy.filter((c) => c.closed()).length === 24,
    );
    // The six it keeps are still open: the cap closes only what is beyond it.
    expect(greedy.filter((c) => !c.closed())).toHaveLength(6);
    expect(await health(gateway, "127.0.0.3")).toBe(200);
    // A seventh from the greedy address is closed on arrival, whatever it sends.
    const seventh = stalled(gateway, "127.0.0.2");
    await until("the seventh is closed", () => seventh.closed());
    // Its own budget comes back as its connections close.
    greedy.find((c) => !c.closed())!.socket.destroy();
    await until(
      "the greedy address is answered again once one of its connections is gone",
      async () => (await health(gateway!, "127.0.0.2")) === 200,
    );
  });
});
