import { existsSync } from "node:fs";
import { loadConfig } from "../config/load.js";
import { databasePath, profileDir, resolveLocation } from "../config/paths.js";
import { HearthError } from "../errors.js";
import {
  assertHoldersKnown,
  describeHolders,
  type Holder,
  holderJson,
  readHoldersSettled,
} from "../process/holders.js";
import { askToPark, type ParkHandle, parkSocketPath } from "../process/park-socket.js";
import { refuseOnPostgres } from "./backend.js";

export interface WindowReport {
  /** The processes that parked for the window, by pid. */
  parked: number[];
}

/**
 * A maintenance window (M5): ask every long-lived hearth process holding
 * the store to park (finish in-flight calls, close its connections, queue
 * new work for at most maintenance.maxParkMs), run `fn` while they are
 * parked, then let them resume, whatever `fn` did. Refuses with
 * HEARTH_STORE_HELD (exit 3), naming them, and leaves everyone as they were
 * when any holder cannot be parked: a process that is not hearth, a hearth
 * process that takes no park requests (the CLI, a library user), or one
 * that does not answer in time (stopped, dead, busy past the bound).
 * `fn` itself still takes the structural gate: the window only makes room.
 * A profile on PostgreSQL has no file to park processes around: refused
 * (HEARTH_UNSUPPORTED_BACKEND) before anything is asked.
 */
export async function withWindow<T>(
  options: { home?: string | undefined; profile?: string | undefined },
  op: string,
  fn: (window: WindowReport) => Promise<T>,
): Promise<T> {
  await refuseOnPostgres(
    options,
    `a maintenance window (${op} --window)`,
    `PostgreSQL needs no window: run hearth sessions ${op} without --window${op === "optimize" ? " (on PostgreSQL it runs VACUUM (ANALYZE) beside the live processes)" : ""}`,
  );
  const { home, profile } = resolveLocation(options);
  const config = loadConfig({ home });
  const maxParkMs = config.maintenance.maxParkMs;
  const path = databasePath(home, profile);
  const dir = profileDir(home, profile);
  const report = readHoldersSettled(path, { ghosts: false });
  assertHoldersKnown(report, op);

  const cannot: { holder: Holder; why: string }[] = [];
  const askable: { holder: Holder; socket: string }[] = [];
  for (const holder of report.holders) {
    const socket = parkSocketPath(dir, holder.pid);
    if (holder.roles.length === 0) cannot.push({ holder, why: "is not a hearth process" });
    else if (holder.roles.includes("parked"))
      cannot.push({ holder, why: "is already parked for another window" });
    else if (!existsSync(socket))
      cannot.push({ holder, why: "takes no park requests (a CLI or library process)" });
    else askable.push({ holder, socket });
  }
  if (cannot.length > 0) throw refusal(op, path, cannot);

  const request = { op, by: process.pid, maxParkMs, dir };
  const asked = await Promise.allSettled(
    askable.map(async ({ holder, socket }) => {
      const handle = await askToPark(socket, request);
      // Fail closed: the answer must come from the very process that holds the store.
      if (holder.startTicks === undefined || handle.answer.startTicks !== holder.startTicks) {
        handle.release();
        throw new HearthError(
          "HEARTH_STORE_HELD",
          "answered, but its identity could not be matched to the holder's (pid reused, or unreadable)",
        );
      }
      return handle;
    }),
  );
  const handles: ParkHandle[] = [];
  const failed: { holder: Holder; why: string }[] = [];
  asked.forEach((outcome, i) => {
    if (outcome.status === "fulfilled") handles.push(outcome.value);
    else failed.push({ holder: askable[i]!.holder, why: (outcome.reason as Error).message });
  });
  if (failed.length > 0) {
    for (const handle of handles) handle.release();
    throw refusal(op, path, failed);
  }
  try {
    return await fn({ parked: askable.map((a) => a.holder.pid) });
  } finally {
    for (const handle of handles) handle.release();
  }
}

function refusal(op: string, path: string, who: { holder: Holder; why: string }[]): HearthError {
  const lines = who.map(({ holder, why }) => `${describeHolders([holder])}\n    ${why}`).join("\n");
  return new HearthError(
    "HEARTH_STORE_HELD",
    `refusing to ${op} ${path} in a maintenance window: ${who.length} process(es) cannot be parked:\n${lines}`,
    {
      resource: path,
      hint: "stop them (hearth ps lists them), or retry when they answer; nothing was changed and everyone else resumed",
      details: {
        holders: who.map(({ holder, why }) => ({ ...holderJson(holder), why })),
      },
    },
  );
}
