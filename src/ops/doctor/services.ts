import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { profileDir } from "../../config/paths.js";
import type { HearthConfig } from "../../config/schema.js";
import { PortTable } from "../../http/port-in-use.js";
import { liveness } from "../../process/identity.js";
import { listProfiles } from "../ps.js";
import type { Finding } from "./finding.js";

interface Service {
  name: "gateway" | "dashboard" | "scheduler";
  /** The live process, or undefined when none runs. */
  pid: number | undefined;
  address: string | undefined;
  /** The configured port (0: any; nothing to say about who else holds it). */
  port: number;
  setting: string;
}

/**
 * The `hearth start` children of this home and profile, from their
 * kernel-backed records. The lock modules load only when a record is
 * there: a doctor on a quiet store loads no lock addon.
 */
async function services(
  home: string,
  profile: string,
  config: HearthConfig,
  ports: PortTable,
): Promise<Service[]> {
  const run = join(profileDir(home, profile), "run");
  const gw = existsSync(join(run, "gateway.json"))
    ? (await import("../../process/gateway-lock.js")).readRecord(join(run, "gateway.json"))
    : undefined;
  const sched = existsSync(join(run, "scheduler.lock.json"))
    ? (await import("../../process/instance-lock.js")).readInstanceRecord(
        join(run, "scheduler.lock.json"),
      )
    : undefined;
  const schedAlive = sched !== undefined && liveness(sched) === "alive";
  // The dashboard's runtime file (dashboard/runtime-file.ts) has no start time:
  // it counts as running only while its pid is the one listening on its port.
  let dash: { pid?: number; address?: string } = {};
  try {
    dash = JSON.parse(readFileSync(join(home, "dashboard.json"), "utf8")) as typeof dash;
  } catch {
    dash = {};
  }
  const dashPort = dash.address ? Number(new URL(dash.address).port) : -1;
  const dashAlive = dash.pid !== undefined && ports.holderOf(dashPort)?.pid === dash.pid;
  return [
    {
      name: "gateway",
      pid: gw && liveness(gw) === "alive" ? gw.pid : undefined,
      address: gw?.address,
      port: config.gateway.port,
      setting: "gateway.port",
    },
    {
      name: "scheduler",
      pid: schedAlive ? sched.pid : undefined,
      address: config.scheduler.port > 0 ? `http://127.0.0.1:${config.scheduler.port}` : undefined,
      port: config.scheduler.port,
      setting: "scheduler.port",
    },
    {
      name: "dashboard",
      pid: dashAlive ? dash.pid : undefined,
      address: dash.address,
      port: config.dashboard.port,
      setting: "dashboard.port",
    },
  ];
}

/** Descriptors a process may need: the store files and locks of each profile, reader threads, sockets. */
export function descriptorsNeeded(
  name: Service["name"],
  profiles: number,
  config: HearthConfig,
): number {
  const perStore = 12 + 3 * config.store.readerThreads;
  const sockets =
    name === "gateway" ? config.gateway.maxConnections : name === "dashboard" ? 256 : 64;
  return 64 + profiles * perStore + sockets;
}

/** Soft "Max open files" of a process (/proc/<pid>/limits); undefined when unreadable or unlimited. */
export function openFilesLimit(pid: number): number | undefined {
  try {
    const line = /^Max open files\s+(\S+)/m.exec(readFileSync(`/proc/${pid}/limits`, "utf8"));
    return line && line[1] !== "unlimited" ? Number(line[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** The systemd unit a process runs in (from /proc/<pid>/cgroup), or undefined. */
export function systemdUnit(pid: number): string | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/cgroup`, "utf8");
    return /\/([^/\n]+\.service)(?:\/|$)/m.exec(text)?.[1];
  } catch {
    return undefined;
  }
}

/**
 * The running services of this home and profile (read-only, M1): each
 * gateway, scheduler and dashboard that runs is asked its /v1/ready;
 * one that does not run is info, unless another process holds its port
 * (it could not start: warning); a running one's descriptor limit is
 * compared with what the configured profiles need.
 */
export async function serviceFindings(
  home: string,
  profile: string,
  config: HearthConfig,
): Promise<Finding[]> {
  const out: Finding[] = [];
  // One reading of the host's listening sockets for the three services.
  const ports = new PortTable();
  for (const s of await services(home, profile, config, ports)) {
    if (s.pid === undefined) {
      const holder = s.port > 0 ? ports.holderOf(s.port) : undefined;
      out.push(
        holder
          ? {
              code: "port_taken",
              severity: "warning",
              message: `no ${s.name} runs for ${profile}, and its port ${s.port} is taken by pid ${holder.pid} (${holder.command})`,
              fix: `stop that process, or set ${s.setting} to a free port`,
            }
          : { code: "service_down", severity: "ok", message: `no ${s.name} runs for ${profile}` },
      );
      continue;
    }
    if (s.address === undefined)
      out.push({
        code: "service_up",
        severity: "ok",
        message: `${s.name} pid ${s.pid} runs (port 0: its address is not known here, not probed)`,
      });
    else {
      // HTTP (and TLS, for a dashboard on https) loads only when a service runs.
      const { probeReady } = await import("../../http/ready-probe.js");
      const ready = await probeReady(s.address);
      const why = ready.reasons.map((r) => r.code).join(", ");
      out.push(
        ready.status === "ready"
          ? {
              code: "service_ready",
              severity: "ok",
              message: `${s.name} pid ${s.pid} is ready at ${s.address}`,
            }
          : ready.status === "not ready"
            ? {
                code: "service_not_ready",
                severity: "warning",
                message: `${s.name} pid ${s.pid} at ${s.address} is not ready: ${why}`,
                fix: "the reasons' codes are in docs/errors.md; hearth logs --level warn",
              }
            : {
                code: "service_unreachable",
                severity: "error",
                message: `${s.name} pid ${s.pid} does not answer at ${s.address} (${ready.reasons[0]?.message ?? "no answer"})`,
                fix: `hearth restart ${s.name}`,
              },
      );
    }
    const limit = openFilesLimit(s.pid);
    const needed = descriptorsNeeded(s.name, Math.max(1, listProfiles(home).length), config);
    if (limit !== undefined && limit < needed) {
      const unit = systemdUnit(s.pid);
      out.push({
        code: "nofile_low",
        severity: "warning",
        message: `${s.name} pid ${s.pid}${unit ? ` (systemd unit ${unit})` : ""} may need about ${needed} descriptors (its store, ${config.store.readerThreads} reader thread(s), its connections) but may open only ${limit}`,
        fix: unit
          ? `raise LimitNOFILE in ${unit} (hearth service install writes LimitNOFILE=65536), then restart it`
          : "raise the limit (ulimit -n, or LimitNOFILE in its systemd unit)",
      });
    }
  }
  return out;
}
