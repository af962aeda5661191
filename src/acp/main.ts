import { createRequire } from "node:module";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { loadConfig } from "../config/load.js";
import { resolveHome } from "../config/paths.js";
import { builtFile } from "../files/built.js";
import { acceptWindows } from "../ops/parking.js";
import { setProcessKind } from "../process/kind.js";
import { openStore } from "../store/open.js";
import { GroupCommitter } from "../turn/group-commit.js";
import { createResponder } from "../turn/responder.js";
import type { ProfileRuntime } from "../turn/run.js";
import { ToolRegistry } from "../turn/tools/registry.js";
import { buildAgent } from "./agent.js";
import { limitLines } from "./line-limit.js";

export interface AcpOptions {
  home?: string | undefined;
  profile: string;
  /** A stdin line longer than this is refused with a JSON-RPC error (default 8 MiB). */
  maxMessageBytes?: number;
  input?: Readable;
  output?: Writable;
}

/** One JSON log line on stderr: stdout belongs to the protocol. */
export function logLine(event: Record<string, unknown>): void {
  process.stderr.write(`${JSON.stringify({ pid: process.pid, proc: "acp", ...event })}\n`);
}

/**
 * `hearth acp`: an ACP agent on stdin/stdout for one profile. It opens the
 * store as a writer (a long-lived holder: `hearth ps` shows kind `acp`),
 * takes part in maintenance windows, serves until stdin closes or a
 * SIGTERM/SIGINT, then cancels the prompts in flight (recorded as
 * cancelled), commits what is queued and closes the store. A connection
 * that failed (stdin broke) is reported as the reason, and exits 1.
 */
export async function runAcp(options: AcpOptions): Promise<{ reason: string }> {
  setProcessKind("acp");
  const home = resolveHome(options.home);
  const config = loadConfig({ home });
  const responder = createResponder(config);
  const tools = await ToolRegistry.load(config.tools, [], {
    mcp: { log: (level, fields, msg) => logLine({ level, ...fields, msg }) },
  });
  const store = await openStore({ home, profile: options.profile });
  const runtime: ProfileRuntime = {
    profile: store.profile,
    store,
    committer: new GroupCommitter(store, config.gateway.groupCommit),
  };
  const log = (level: string) => (event: Record<string, unknown>, msg: string) =>
    logLine({ level, ...event, msg });
  const parking = await acceptWindows(store, {
    info: log("info"),
    warn: log("warn"),
    error: log("error"),
  });
  const shutdown = new AbortController();
  const output = options.output ?? process.stdout;
  const write = (text: string) =>
    new Promise<void>((resolve, reject) =>
      output.write(text, (err) => (err ? reject(err) : resolve())),
    );
  const max = options.maxMessageBytes ?? 8 * 1024 * 1024;
  const input = limitLines(
    Readable.toWeb(options.input ?? process.stdin) as unknown as ReadableStream<Uint8Array>,
    max,
    (response) => {
      logLine({ level: "warn", event: "acp.message_too_large", limit: max });
      void write(response).catch(() => undefined);
    },
  );
  const stream = acp.ndJsonStream(Writable.toWeb(output) as WritableStream<Uint8Array>, input, {
    maxMessageBytes: max * 2,
  });
  const { app, settled, close } = buildAgent(
    {
      runtime,
      config: () => config,
      responder: () => responder,
      tools: () => tools,
      shutdown: shutdown.signal,
      log: (event) => logLine({ level: "info", ...event }),
    },
    version(),
  );
  const connection = app.connect(stream);
  logLine({ level: "info", event: "acp.ready", profile: store.profile, path: store.path });
  // A turn a killed process left inside its tool loop (D7) is finished by the
  // next prompt on its session, which streams it to the editor before its own
  // (runTurn): not here in the background, where it would hold the session's
  // lease against the editor's first prompt and stream to nobody.
  const why = await new Promise<string>((resolve) => {
    process.once("SIGTERM", () => resolve("SIGTERM"));
    process.once("SIGINT", () => resolve("SIGINT"));
    connection.closed.then(
      () => resolve("stdin closed"),
      () => resolve("connection failed"),
    );
  });
  shutdown.abort();
  // Prompts in flight record their cancellation before the store closes.
  await settled();
  await tools.close();
  await close();
  await runtime.committer.drain();
  connection.close();
  await parking?.close();
  await store.close();
  logLine({ level: "info", event: "acp.stopped", reason: why });
  // A signal leaves stdin open, which would keep the process alive.
  if (!options.input) process.stdin.destroy();
  return { reason: why };
}

function version(): string {
  try {
    return (createRequire(import.meta.url)(builtFile("../package.json")) as { version: string })
      .version;
  } catch {
    return "0.0.0";
  }
}
