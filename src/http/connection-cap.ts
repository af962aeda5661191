import type { Server, Socket } from "node:net";

/**
 * At most `limit` open connections per client address (S1): one client
 * holding idle connections cannot take the server's whole connection cap
 * (`maxConnections`) and starve every other client. A connection beyond it
 * is closed on arrival, before a byte of it is read. IPv4-mapped IPv6
 * addresses count as their IPv4 address; clients behind one address (a
 * reverse proxy, every local process on 127.0.0.1) share one budget.
 */
export function capConnectionsPerClient(server: Server, limit: number): void {
  const open = new Map<string, number>();
  server.on("connection", (socket: Socket) => {
    const address = (socket.remoteAddress ?? "?").replace(/^::ffff:/, "");
    const count = open.get(address) ?? 0;
    if (count >= limit) {
      socket.destroy();
      return;
    }
    open.set(address, count + 1);
    socket.once("close", () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
}
