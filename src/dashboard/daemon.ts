import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import type { FastifyInstance } from "fastify";
import { loadConfig } from "../config/load.js";
import { resolveHome } from "../config/paths.js";
import type { HearthConfig } from "../config/schema.js";
import { HearthError, isHearthError } from "../errors.js";
import { hostPolicy } from "../http/host-check.js";
import { listenOrExplain } from "../http/port-in-use.js";
import { warningRing } from "../log/events.js";
import { logSink } from "../log/sink.js";
import { startHealthSampler } from "../ops/health-sampler.js";
import { acceptWindows } from "../ops/parking.js";
import { setProcessKind } from "../process/kind.js";
import type { ParkServer } from "../process/park-socket.js";
import { loadAssets } from "./assets.js";
import { MemorySessions } from "./browser-sessions.js";
import { DoctorRuns } from "./doctor-runs.js";
import { GatewayClient } from "./gateway-client.js";
import { LiveFeed } from "./live.js";
import { createLoginToken, loginLink } from "./login-link.js";
import { ProfileStores } from "./profiles.js";
import { removeRuntimeFile, writeRuntimeFile } from "./runtime-file.js";
import { assertSafeBind } from "./security.js";
import { buildDashboard, type Login } from "./server.js";
import { StoredSessions } from "./stored-sessions.js";

export interface Dashboard {
  address: string;
  profiles: string[];
  /** A one-time login link printed at start. */
  login: string;
  app: FastifyInstance;
  /** Stop accepting, end live streams, let in-flight requests finish (bounded), close the stores. */
  stop(): Promise<void>;
}

const DRAIN_MS = 5_000;

/**
 * Start the dashboard for one home and one or more profiles: each profile's
 * store opened read-only, the HTTP server listening on dashboard.host/port
 * (127.0.0.1:8788), a first one-time login link created.
 */
export async function startDashboard(options: {
  home?: string | undefined;
  profiles: string[];
  logLevel?: string;
}): Promise<Dashboard> {
  setProcessKind("dashboard");
  const home = resolveHome(options.home);
  const config: HearthConfig = loadConfig({ home });
  const { host, port, tls, allowedHosts } = config.dashboard;
  assertSafeBind(host, tls !== undefined);
  const tlsFiles = tls ? readTls(tls.certFile, tls.keyFile) : undefined;
  let app: FastifyInstance | undefined;
  const stores = await ProfileStores.open(home, options.profiles, () => {
    const log = app?.log;
    return log && { warn: (e, m) => log.warn(e, m), error: (e, m) => log.error(e, m) };
  });
  const idleMs = config.dashboard.sessionIdleMinutes * 60_000;
  // On PostgreSQL every dashboard of the database shares its logins (hosts
  // behind a load balancer); on SQLite (one host) they stay in memory.
  const shared = stores.stores[0]?.backend === "postgres";
  const sessions = shared ? new StoredSessions(stores, idleMs) : new MemorySessions(idleMs);
  const events = warningRing();
  const parking: ParkServer[] = [];
  const live = new LiveFeed(stores, config.dashboard.livePollMs, (err) =>
    app?.log.warn({ event: "dashboard.live_failed", err }, "live poll failed"),
  );
  const doctor = new DoctorRuns(home, {
    everyMs: config.dashboard.doctorEveryMs,
    freshMs: config.dashboard.doctorFreshMs,
  });
  try {
    await live.start();
    app = buildDashboard(
      {
        stores,
        sessions,
        live,
        gateway: new GatewayClient(stores, config),
        assets: loadAssets(),
        policy: hostPolicy({ bind: host, allowedHosts }),
        cookieName: cookieName(config.dashboard.cookieName, shared, port),
        tls: tlsFiles,
        redeem: (token) => redeem(stores, token),
        events,
        doctor,
        prices: config.dashboard.prices,
      },
      {
        level: options.logLevel ?? process.env.HEARTH_LOG_LEVEL ?? "info",
        stream: logSink({ ring: events, proc: "dashboard" }),
      },
    );
    const log = app.log;
    for (const store of stores.stores) {
      const server = await acceptWindows(store, {
        info: (e, m) => log.info(e, m),
        warn: (e, m) => log.warn(e, m),
        error: (e, m) => log.error(e, m),
      });
      if (server) parking.push(server);
    }
    const listening = app;
    const address = await listenOrExplain(() => listening.listen({ host, port }), {
      what: "dashboard",
      host,
      port,
      setting: "dashboard.port",
    });
    // Other hosts of a PostgreSQL store list this dashboard (hearth ps, dashboard link).
    for (const store of stores.stores) await store.hosts.announce("dashboard", address);
    const token = await createLoginToken(stores, stores.profiles[0]!, config);
    writeRuntimeFile(home, { pid: process.pid, address, profiles: stores.profiles });
    const sampler = startHealthSampler({
      config,
      profiles: stores.profiles,
      reader: (profile) => stores.reader(profile),
      write: (profile, fn) => stores.withWriter(profile, fn),
      log: { warn: (e, m) => log.warn(e, m) },
      immediate: false,
    });
    doctor.start(() => stores.profiles);
    const server = app;
    return {
      address,
      profiles: stores.profiles,
      login: loginLink(address, token.code),
      app: server,
      stop: async () => {
        sampler.stop();
        doctor.stop();
        live.stop();
        const closed = server.close();
        const sweep = setInterval(() => server.server.closeIdleConnections(), 20);
        await Promise.race([closed, new Promise((r) => setTimeout(r, DRAIN_MS).unref())]);
        clearInterval(sweep);
        server.server.closeAllConnections();
        removeRuntimeFile(home, process.pid);
        await Promise.all(parking.map((p) => p.close()));
        await stores.close();
      },
    };
  } catch (err) {
    live.stop();
    doctor.stop();
    await app?.close();
    await Promise.all(parking.map((p) => p.close()));
    await stores.close();
    throw err;
  }
}

/**
 * A login token is a one-time pairing code of any served profile (issue 5's
 * families): the login carries that profile and its family's grant (scope,
 * all-profiles for the operator's own link).
 */
async function redeem(stores: ProfileStores, token: string): Promise<Login> {
  if (token.length > 64) throw new HearthError("HEARTH_UNAUTHORIZED", "not a login token");
  for (const profile of stores.profiles) {
    try {
      return await stores.withWriter(profile, async (store) => {
        const pair = await store.tokens.redeemPairing(token, {
          accessMs: 60_000,
          refreshMs: 60_000,
        });
        const { scope, allProfiles } = await store.tokens.verifyAccess(pair.accessToken);
        return { familyId: pair.familyId, profile, scope, allProfiles };
      });
    } catch (err) {
      if (!isHearthError(err, "HEARTH_UNAUTHORIZED")) throw err;
    }
  }
  throw new HearthError("HEARTH_UNAUTHORIZED", "the login link is unknown, used or expired", {
    hint: "hearth dashboard link   # prints a fresh one",
  });
}

/**
 * The login cookie's name. Cookies ignore ports: on SQLite each dashboard of
 * a host gets its own name (its port), or two of them would log each other
 * out. Shared logins (PostgreSQL) need one name on every host behind the
 * balancer: `hearth_dashboard`. dashboard.cookieName overrides both.
 */
export function cookieName(configured: string | undefined, shared: boolean, port: number): string {
  if (configured !== undefined) return configured;
  if (shared) return "hearth_dashboard";
  return `hearth_dashboard_${port === 0 ? randomBytes(4).toString("hex") : port}`;
}

function readTls(certFile: string, keyFile: string): { cert: Buffer; key: Buffer } {
  try {
    return { cert: readFileSync(certFile), key: readFileSync(keyFile) };
  } catch (err) {
    throw new HearthError("HEARTH_CONFIG_INVALID", `dashboard.tls: cannot read ${String(err)}`, {
      resource: "dashboard.tls",
      hint: "point dashboard.tls.certFile and keyFile at readable PEM files",
      cause: err,
    });
  }
}
