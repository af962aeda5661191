/**
 * A TCP proxy in front of PostgreSQL that can lose a COMMIT's reply: the
 * COMMIT reaches the server (which commits), then the connection is cut
 * before its answer comes back, as when a server restarts or a network
 * drops at that instant. The client sees a connection error for a
 * transaction that landed. It reads just enough of the wire protocol (the
 * frontend's message framing) to see which statements a connection runs.
 */
import { createServer, type Server, type Socket, connect as tcp } from "node:net";

export interface CommitCut {
  /** A statement of the transaction (Parse or simple Query text) contains this. */
  statement: string;
  /** And one of its bound parameters (Bind message) contains this. */
  parameter: string;
}

export class PgProxy {
  url = "";
  /** COMMITs whose reply was cut so far. */
  cuts = 0;
  private cut: CommitCut | undefined;
  private readonly sockets = new Set<Socket>();

  constructor(
    private readonly server: Server,
    target: string,
  ) {
    const port = (server.address() as { port: number }).port;
    const u = new URL(target);
    u.host = `127.0.0.1:${port}`;
    this.url = u.toString();
  }

  /** Lose the reply of the next COMMIT of a transaction that ran `cut`'s statement with its parameter. */
  loseNextCommit(cut: CommitCut): void {
    this.cut = cut;
  }

  /** One client connection: parse what it sends, forward it, cut when told. */
  pipe(client: Socket, host: string, port: number): void {
    const server = tcp({ host, port });
    this.sockets.add(client).add(server);
    let buffered = Buffer.alloc(0);
    let started = false;
    let statement = "";
    let matched = false;
    let dropping = false;
    const close = () => {
      client.destroy();
      server.destroy();
    };
    client.on("error", close).on("close", close);
    server.on("error", close).on("close", close);
    server.on("data", (d: Buffer) => {
      if (!dropping) client.write(d);
    });
    client.on("data", (d: Buffer) => {
      buffered = Buffer.concat([buffered, d]);
      for (;;) {
        const head = started ? 5 : 4;
        if (buffered.length < head) return;
        const size = started ? 1 + buffered.readInt32BE(1) : buffered.readInt32BE(0);
        if (buffered.length < size) return;
        const message = buffered.subarray(0, size);
        buffered = buffered.subarray(size);
        if (!started) {
          started = true;
          server.write(message);
          continue;
        }
        const type = String.fromCharCode(message[0]!);
        const text = message.subarray(5).toString("latin1");
        if (type === "P") statement = text.split("\0")[1] ?? "";
        if (type === "Q") statement = text.split("\0")[0] ?? "";
        const cut = this.cut;
        if (cut && statement.includes(cut.statement)) {
          if (type === "Q" || (type === "B" && text.includes(cut.parameter))) matched = true;
        }
        server.write(message);
        if (type === "Q" && /^(COMMIT|ROLLBACK)$/.test(statement)) {
          if (matched && statement === "COMMIT" && this.cut) {
            // The server has the COMMIT; its reply never reaches the client.
            this.cut = undefined;
            this.cuts++;
            dropping = true;
            setTimeout(close, 300);
          }
          matched = false;
        }
      }
    });
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A proxy on a free loopback port to the server of `url`; `proxy.url` is `url` through it. */
export async function startPgProxy(url: string): Promise<PgProxy> {
  const target = new URL(url);
  let proxy: PgProxy | undefined;
  const server = createServer((client) =>
    proxy?.pipe(client, target.hostname, Number(target.port || 5432)),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  proxy = new PgProxy(server, url);
  return proxy;
}
