import type { FastifyInstance } from "fastify";
import { loadConfig } from "../config/load.js";
import { resolveHome, validateProfile } from "../config/paths.js";
import type { HearthConfig } from "../config/schema.js";
import { HearthError, isHearthError } from "../errors.js";
import { isLoopbackName } from "../http/host-check.js";
import { listenOrExplain } from "../http/port-in-use.js";
import { warningRing } from "../log/events.js";
import { logSink } from "../log/sink.js";
import { startHealthSampler } from "../ops/health-sampler.js";
import { acceptWindows } from "../ops/parking.js";
import { type Replication, startReplication } from "../ops/replicate/run.js";
import {
  claimAfterDrain,
  claimGateway,
  claimHomeGateway,
  type GatewayLock,
  gatewayRecordPath,
} from "../process/gateway-lock.js";
import { setProcessKind } from "../process/kind.js";
import type { ParkServer } from "../process/park-socket.js";
import { isSqliteStore } from "../store/api.js";
import { openStore, openStoresTogether } from "../store/open.js";
import { ChatSessions } from "../turn/chat-sessions.js";
import { GroupCommitter } from "../turn/group-commit.js";
import { createResponder, type Responder } from "../turn/responder.js";
import { resumeOrphanedTurns } from "../turn/resume.js";
import type { ProfileRuntime } from "../turn/run.js";
import type { McpEvents } from "../turn/tools/mcp/servers.js";
import { ToolRegistry } from "../turn/tools/registry.js";
import { HandoffWatcher } from "./handoff.js";
import { GatewayMetrics } from "./metrics.js";
import { GenerationRecovery } from "./recovery.js";
import { watchReplication } from "./replication-metrics.js";
import { buildServer } from "./server.js";
import { registerStoreGauges } from "./store-gauges.js";

export interface Gateway {
  address: string;
  profiles: string[];
  /** Database path of each served profile, in order. */
  paths: string[];
  app: FastifyInstance;
  /** Re-read config.json and the environment; keeps the old config when the new one is invalid. */
  reload(): { ok: true } | { ok: false; error: string };
  /** Stop accepting, drain in-flight turns (bounded by gateway.drainMs), close the stores. */
  stop(): Promise<void>;
  /** Resolves when the gateway cannot go on serving (HEARTH_GENERATION_LOST): `hearth gateway run` then stops and exits 78. */
  fatal: Promise<Error>;
}

/**
 * Start the gateway for one home and one or more profiles: each profile's
 * store is opened as a writer and its single-instance lock taken (P3), then
 * the HTTP API listens (127.0.0.1 by default).
 */
export async function startGateway(options: {
  home?: string | undefined;
  profiles: string[];
  logLevel?: string;
}): Promise<Gateway> {
  setProcessKind("gateway");
  const home = resolveHome(options.home);
  // Every name is checked before any store is opened (or created).
  for (const profile of options.profiles) validateProfile(profile);
  if (options.profiles.length === 0) throw new RangeError("the gateway needs at least one profile");
  let config: HearthConfig = loadConfig({ home });
  refuseExposure(config);
  let responder: Responder = createResponder(config);
  const metrics = new GatewayMetrics();
  // MCP servers start on first use, long after `app` exists; until then nothing logs.
  let mcpLog: McpEvents["log"];
  const mcpEvents: McpEvents = {
    log: (level, fields, message) => mcpLog?.(level, fields, message),
    onCall: (call) => metrics.mcpCall(call),
  };
  let tools = await ToolRegistry.load(config.tools, [], { mcp: mcpEvents });
  const events = warningRing();
  const sink = logSink({ ring: events, proc: "gateway" });
  // What a store reports while it opens, before the server (and its logger) exists.
  let warn = (fields: object, message: string): void => {
    sink.write(
      JSON.stringify({
        level: 40,
        time: Date.now(),
        proc: "gateway",
        pid: process.pid,
        ...fields,
        msg: message,
      }),
    );
  };
  const runtimes = new Map<string, ProfileRuntime>();
  const locks: GatewayLock[] = [];
  const closeAll = async () => {
    await tools.close();
    for (const lock of locks.splice(0)) lock.release();
    for (const r of runtimes.values()) await r.store.close();
    runtimes.clear();
  };
  // One reading of /proc/self/maps for the first opens of every profile (issue 44).
  const openAll = async () => {
    for (const profile of options.profiles) {
      const store = await openStore({
        home,
        profile,
        readerThreads: true,
        // What the store reports later (a removed WAL saved on reattach) goes to the gateway's log.
        logger: { warn: (fields, message) => warn(fields, message) },
      });
      runtimes.set(profile, {
        profile,
        store,
        committer: new GroupCommitter(store, config.gateway.groupCommit),
        // Each chat's open session between turns, checked in the append (AppendItem.openChat).
        chats: new ChatSessions(),
      });
      // SQLite: one gateway per database file; PostgreSQL: one per home, several per database.
      const claim = () => (isSqliteStore(store) ? claimGateway(store) : claimHomeGateway(store));
      locks.push(await claimAfterDrain(claim, gatewayRecordPath(home, profile)));
    }
  };
  try {
    await openStoresTogether(openAll);
  } catch (err) {
    await closeAll();
    throw err;
  }
  metrics.watchCommits(() => runtimes.values());
  registerStoreGauges(metrics.registry, home, () => runtimes.values());
  for (const r of runtimes.values()) {
    r.committer.onBatch = (size, ms) => {
      metrics.batchSize.observe({ profile: r.profile }, size);
      metrics.commitSeconds.observe({ profile: r.profile }, ms / 1000);
    };
  }
  const shutdown = new AbortController();
  const draining = new AbortController();
  let stopping = false;
  let lost: (err: Error) => void = () => {};
  const fatal = new Promise<Error>((resolve) => {
    lost = resolve;
  });
  const recovery = new GenerationRecovery(
    runtimes,
    {
      warn: (event, message) => app.log.warn(event, message),
      error: (event, message) => app.log.error(event, message),
    },
    (err) => lost(err),
  );
  const app: FastifyInstance = buildServer(
    {
      runtimes,
      config: () => config,
      responder: () => responder,
      tools: () => tools,
      metrics,
      shutdown: shutdown.signal,
      draining: draining.signal,
      recover: (err) => recovery.recover(err),
      events,
    },
    {
      level: options.logLevel ?? process.env.HEARTH_LOG_LEVEL ?? "info",
      stream: sink,
    },
  );
  mcpLog = (level, fields, message) => app.log[level](fields, message);
  warn = (fields, message) => app.log.warn(fields, message);
  // While stopping, answers tell clients not to reuse the connection.
  app.addHook("onSend", (_request, reply, payload, done) => {
    if (stopping) void reply.header("connection", "close");
    done(null, payload);
  });
  const idle = setInterval(() => void endIdleSessions(runtimes, config, recovery), 60_000);
  idle.unref();
  const watcher = new HandoffWatcher(
    runtimes,
    () => config,
    {
      info: (event, message) => app.log.info(event, message),
      warn: (event, message) => app.log.warn(event, message),
    },
    (err) => recovery.recover(err),
  );
  let address: string;
  let sampler: { stop(): void } | undefined;
  let replication: Replication | undefined;
  const parking: ParkServer[] = [];
  const logOf = (level: "info" | "warn" | "error") => (event: object, message: string) =>
    app.log[level](event, message);
  try {
    await watcher.start();
    for (const r of runtimes.values()) {
      const server = await acceptWindows(
        r.store,
        { info: logOf("info"), warn: logOf("warn"), error: logOf("error") },
        // A loss a park found stops the gateway as one its reattach found does.
        (err) => lost(err),
      );
      if (server) parking.push(server);
    }
    const { host, port } = config.gateway;
    address = await listenOrExplain(() => app.listen({ host, port }), {
      what: "gateway",
      host,
      port,
      setting: "gateway.port",
    });
    for (const lock of locks) lock.announce(address);
    // Other hosts of a PostgreSQL store list this gateway (hearth ps).
    for (const r of runtimes.values()) await r.store.hosts.announce("gateway", address);
    sampler = startHealthSampler({
      config,
      profiles: [...runtimes.keys()],
      reader: (profile) => runtimes.get(profile)!.store,
      write: (profile, fn) => fn(runtimes.get(profile)!.store),
      log: { warn: logOf("warn") },
    });
    replication = await startReplication({
      config,
      home,
      stores: [...runtimes.values()].map((r) => r.store),
      log: { info: logOf("info"), warn: logOf("warn") },
    });
    watchReplication(metrics.registry, () => replication?.statuses() ?? []);
  } catch (err) {
    clearInterval(idle);
    await replication?.stop();
    await Promise.all(parking.map((p) => p.close()));
    await watcher.stop(0);
    await closeAll();
    throw err;
  }
  await endIdleSessions(runtimes, config, recovery);
  // Turns a crash left inside their tool loop finish now, in the background (D7).
  for (const r of runtimes.values()) {
    void resumeOrphanedTurns(
      r,
      { responder, config, tools, signal: shutdown.signal, stop: draining.signal },
      { info: logOf("info"), warn: logOf("warn") },
    );
  }
  /** A reload in every served profile's audit trail (a failure to record is logged, never fatal). */
  const auditReload = (detail: { [key: string]: string }, outcome: "ok" | "failed" = "ok") => {
    for (const r of runtimes.values())
      r.store.audit
        .record({ action: "config.reload", outcome, detail })
        .catch((err: unknown) =>
          app.log.error({ event: "gateway.audit_failed", err }, "config reload not audited"),
        );
  };
  return {
    fatal,
    address,
    profiles: [...runtimes.keys()],
    paths: [...runtimes.values()].map((r) => r.store.path),
    app,
    reload: () => {
      try {
        const next = loadConfig({ home });
        // The socket stays bound where it is: auth cannot be turned off beyond loopback.
        refuseExposure({ ...next, gateway: { ...next.gateway, host: config.gateway.host } });
        responder = createResponder(next);
        config = next;
        // Tool modules load asynchronously; the old tools serve until the new ones are ready.
        ToolRegistry.load(next.tools, [], { mcp: mcpEvents, previous: tools }).then(
          (loaded) => {
            const old = tools;
            tools = loaded;
            // Changed MCP servers: the old ones stop (a call still on one ends as an error).
            if (old.mcp !== loaded.mcp) void old.close();
          },
          (err: Error) =>
            app.log.error({ event: "gateway.tools_reload_failed", err }, "tools not reloaded"),
        );
        app.log.info(
          { event: "gateway.reloaded", responder: responder.name },
          "configuration reloaded",
        );
        auditReload({ responder: responder.name });
        return { ok: true };
      } catch (err) {
        app.log.error({ event: "gateway.reload_failed", err }, "configuration not reloaded");
        auditReload({ error: isHearthError(err) ? err.code : "invalid" }, "failed");
        return { ok: false, error: (err as Error).message };
      }
    },
    stop: async () => {
      clearInterval(idle);
      sampler?.stop();
      stopping = true;
      // A start that comes meanwhile (a restart) waits for this one instead of refusing.
      const until = Date.now() + config.gateway.drainMs + CANCEL_GRACE_MS;
      for (const lock of locks) lock.draining(until);
      draining.abort();
      const drained = app.close();
      // close() only drops connections idle at that instant: keep dropping the
      // keep-alive ones as their in-flight turns finish.
      const sweep = setInterval(() => app.server.closeIdleConnections(), 20);
      const timer = new Promise((r) => setTimeout(r, config.gateway.drainMs).unref());
      const started = Date.now();
      await Promise.race([drained, timer]);
      clearInterval(sweep);
      await watcher.stop(Math.max(0, config.gateway.drainMs - (Date.now() - started)));
      shutdown.abort();
      // Turns still running are cancelled now: they commit their
      // hearth.turn_cancelled and answer HEARTH_TURN_CANCELLED before the
      // stores close (bounded: a tool that ignores the abort cannot hold the exit).
      await Promise.race([drained, new Promise((r) => setTimeout(r, CANCEL_GRACE_MS).unref())]);
      for (const r of runtimes.values()) await r.committer.drain();
      await Promise.all(parking.map((p) => p.close()));
      await replication?.stop();
      await closeAll();
    },
  };
}

/** How long cancelled turns get to record how they ended once the drain is over. */
const CANCEL_GRACE_MS = 5_000;

/**
 * Nothing listens beyond loopback without auth (S1): a gateway bound to any
 * other address (0.0.0.0, ::, a LAN address, a host name) needs
 * gateway.requireAuth.
 */
export function refuseExposure(config: HearthConfig): void {
  const { host, requireAuth } = config.gateway;
  if (requireAuth || isLoopbackName(host)) return;
  throw new HearthError(
    "HEARTH_EXPOSED_WITHOUT_AUTH",
    `refusing to serve on ${host} without authentication: every transcript would be readable and writable by anyone who can reach that address`,
    {
      resource: "gateway.host",
      hint: 'keep "gateway.host": "127.0.0.1" and put a TLS reverse proxy in front, or set "gateway.requireAuth": true (and pair clients with hearth token create); see docs/security.md',
    },
  );
}

async function endIdleSessions(
  runtimes: Map<string, ProfileRuntime>,
  config: HearthConfig,
  recovery: GenerationRecovery,
): Promise<void> {
  for (const r of runtimes.values()) {
    try {
      await r.store.sessions.endIdle(config.gateway.idleMinutes * 60_000);
    } catch (err) {
      // The next sweep tries again; a busy store is not a reason to stop serving.
      await recovery.recover(err);
    }
  }
}
