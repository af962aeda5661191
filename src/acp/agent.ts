import { randomUUID } from "node:crypto";
import { isAbsolute } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import type { HearthConfig } from "../config/schema.js";
import { HearthError, isHearthError } from "../errors.js";
import type { Responder } from "../turn/responder.js";
import { type ProfileRuntime, runTurn } from "../turn/run.js";
import { textProblem } from "../turn/storable-text.js";
import type { LoopEvents } from "../turn/tool-loop.js";
import { callsOf } from "../turn/tool-records.js";
import type { ToolRegistry } from "../turn/tools/registry.js";
import { clientTools } from "./client-tools.js";
import { EditorMcp, editorMcpEntries } from "./mcp-servers.js";
import { editorAsker } from "./permission.js";
import { promptText, toolCall, toolResult, toolStarted, updatesOf } from "./updates.js";

export interface AcpDeps {
  runtime: ProfileRuntime;
  config: () => HearthConfig;
  responder: () => Responder;
  tools: () => ToolRegistry;
  /** Aborted when the process stops: prompts in flight end as cancelled. */
  shutdown: AbortSignal;
  log: (event: Record<string, unknown>) => void;
}

/** Messages read per page when a session is replayed (the store's windowed load). */
const REPLAY_PAGE = 200;
const cwdKey = (sessionId: string) => `acp-cwd:${sessionId}`;

/**
 * hearth as an ACP agent: each ACP session is a hearth session (source
 * `acp`); a prompt is one turn through the same pipeline as the gateway
 * (lease, commit, responder, tool loop), streamed as session updates.
 */
export function buildAgent(
  deps: AcpDeps,
  version: string,
): { app: acp.AgentApp; settled: () => Promise<void>; close: () => Promise<void> } {
  const { store } = deps.runtime;
  const inFlight = new Map<string, AbortController>();
  /** What the editor said it can do at initialize (its files, its terminal). */
  let clientCapabilities: acp.ClientCapabilities | undefined;
  const running = new Set<Promise<unknown>>();
  const editorMcp = new EditorMcp((session) => ({
    log: (level, fields, msg) => deps.log({ level, session, ...fields, msg }),
  }));
  /** The editor's MCP servers, checked before anything changes (invalid params naming the entry). */
  const mcpEntries = (list: unknown) => {
    const entries = editorMcpEntries(list);
    const problem = deps.tools().mcpNameProblem(Object.keys(entries));
    if (problem) throw acp.RequestError.invalidParams(undefined, problem);
    return entries;
  };

  const replay = async (client: acp.AgentContext, sessionId: string) => {
    for (let after = -1; ; ) {
      const page = await store.messages.load(sessionId, {
        afterOrdinal: after,
        limit: REPLAY_PAGE,
      });
      for (const m of page)
        for (const update of updatesOf(m))
          await client.notify(acp.methods.client.session.update, { sessionId, update });
      if (page.length < REPLAY_PAGE) return;
      after = page[page.length - 1]!.ordinal;
    }
  };

  const app = acp
    .agent({ name: "hearth" })
    .onRequest(acp.methods.agent.initialize, ({ params }) => {
      clientCapabilities = params.clientCapabilities;
      return {
        protocolVersion: acp.PROTOCOL_VERSION,
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: { embeddedContext: true },
          sessionCapabilities: { list: {} },
          mcpCapabilities: { http: true },
        },
        agentInfo: { name: "hearth", title: "hearth", version },
        authMethods: [],
      };
    })
    .onRequest(acp.methods.agent.session.new, async ({ params }) =>
      guard(async () => {
        // The chat key is the id: the gateway continues it as {platform: "acp", chat: id}.
        const id = randomUUID();
        checkCwd(params.cwd);
        const mcp = mcpEntries(params.mcpServers);
        const session = await store.sessions.create({ id, source: "acp", chatKey: id });
        await store.meta.set(cwdKey(session.id), params.cwd);
        await editorMcp.use(session.id, mcp);
        deps.log({ event: "acp.session_new", session: session.id });
        return { sessionId: session.id };
      }),
    )
    .onRequest(acp.methods.agent.session.load, async ({ params, client }) =>
      guard(async () => {
        checkCwd(params.cwd);
        const mcp = mcpEntries(params.mcpServers);
        const session = await store.sessions.require(params.sessionId);
        await store.meta.set(cwdKey(session.id), params.cwd);
        await editorMcp.use(session.id, mcp);
        await replay(client, session.id);
        deps.log({ event: "acp.session_load", session: session.id });
        return {};
      }),
    )
    .onRequest(acp.methods.agent.session.list, async ({ params }) =>
      guard(async () => {
        const page = await store.sessions.list({
          source: "acp",
          limit: 50,
          ...(params.cursor ? { cursor: params.cursor } : {}),
        });
        const sessions: acp.SessionInfo[] = [];
        for (const s of page.items) {
          const cwd = (await store.meta.get(cwdKey(s.id))) ?? "";
          if (params.cwd && cwd !== params.cwd) continue;
          sessions.push({
            sessionId: s.id,
            cwd,
            title: s.title,
            updatedAt: new Date(s.lastActivityAt).toISOString(),
          });
        }
        return { sessions, nextCursor: page.nextCursor };
      }),
    )
    .onRequest(acp.methods.agent.session.prompt, async ({ params, client, signal }) =>
      guard(async () => {
        const { sessionId } = params;
        if (inFlight.has(sessionId))
          throw new acp.RequestError(
            -32600,
            "Invalid request: this session already has a prompt running",
          );
        // Refused like the gateway refuses them, before anything is stored.
        const content = promptText(params.prompt);
        if (content === "") throw acp.RequestError.invalidParams(undefined, "the prompt is empty");
        const problem = textProblem(content, false);
        if (problem) throw acp.RequestError.invalidParams(undefined, `the prompt ${problem}`);
        const controller = new AbortController();
        const abort = () => controller.abort();
        // Removed when the prompt ends: the shutdown signal lives as long as the process.
        for (const s of [signal, deps.shutdown]) s.addEventListener("abort", abort, { once: true });
        const unlisten = () => {
          for (const s of [signal, deps.shutdown]) s.removeEventListener("abort", abort);
        };
        inFlight.set(sessionId, controller);
        // Updates go out in order, and all of them before the prompt's answer.
        let sent: Promise<unknown> = Promise.resolve();
        const send = (update: acp.SessionUpdate) => {
          sent = sent.then(() =>
            client
              .notify(acp.methods.client.session.update, { sessionId, update })
              .catch(() => undefined),
          );
        };
        const events: LoopEvents = {
          onDelta: (text) =>
            send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } }),
          onToolCalls: (m) => {
            for (const c of callsOf(m)) send(toolCall(c.id, c.function.name, c.function.arguments));
          },
          onToolStart: (call) => send(toolStarted(call.id)),
          onToolResult: (m) => send(toolResult(m)),
        };
        const turn = runTurn(
          deps.runtime,
          { platform: "acp", chat: sessionId, sessionId, content },
          {
            responder: deps.responder(),
            config: deps.config(),
            // The editor's files, terminal and MCP servers, when it offers them, as this session's tools.
            tools: deps
              .tools()
              .withSessionTools(
                clientTools(
                  client,
                  sessionId,
                  clientCapabilities,
                  (await store.meta.get(cwdKey(sessionId))) ?? "/",
                ),
                editorMcp.get(sessionId),
              ),
            signal: controller.signal,
            log: { warn: (event, msg) => deps.log({ level: "warn", ...event, msg }) },
            askPermission: editorAsker(client, sessionId),
          },
          // A turn a killed process left unfinished here is finished first, in the editor's sight.
          { ...events, resumed: events },
        );
        running.add(turn);
        try {
          await turn;
          await sent;
          return { stopReason: "end_turn" as const };
        } catch (err) {
          await sent;
          // A cancel while the prompt waited for another turn is still a cancel (ACP requires it).
          if (isHearthError(err, "HEARTH_TURN_CANCELLED") || controller.signal.aborted)
            return { stopReason: "cancelled" as const };
          throw err;
        } finally {
          unlisten();
          inFlight.delete(sessionId);
          running.delete(turn);
        }
      }),
    )
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      inFlight.get(params.sessionId)?.abort();
    });
  const settled = async () => {
    await Promise.allSettled([...running]);
  };
  return { app, settled, close: () => editorMcp.close() };
}

/** ACP requires an absolute working directory; a relative one is refused, not stored. */
function checkCwd(cwd: string): void {
  if (typeof cwd !== "string" || !isAbsolute(cwd))
    throw acp.RequestError.invalidParams(
      undefined,
      `cwd must be an absolute path, not ${JSON.stringify(cwd)}`,
    );
}

/** HearthErrors as JSON-RPC errors: the code and hint in `data`, the message as is. */
async function guard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof acp.RequestError) throw err;
    if (err instanceof HearthError) {
      const code = err.code === "HEARTH_SESSION_NOT_FOUND" ? -32002 : -32000;
      throw new acp.RequestError(code, err.message, {
        code: err.code,
        ...(err.hint ? { hint: err.hint } : {}),
      });
    }
    if (err instanceof TypeError || err instanceof RangeError)
      throw acp.RequestError.invalidParams(undefined, err.message);
    throw err;
  }
}
