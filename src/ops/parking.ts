import { profileDir } from "../config/paths.js";
import { isHearthError } from "../errors.js";
import { type ParkServer, serveParking } from "../process/park-socket.js";
import { isSqliteStore, type Store } from "../store/api.js";
import { pauseReplication, resumeReplication } from "./replicate/run.js";

export interface ParkingLog {
  info(event: Record<string, unknown>, message: string): void;
  warn(event: Record<string, unknown>, message: string): void;
  error(event: Record<string, unknown>, message: string): void;
}

/**
 * The participant side of maintenance windows (M5), for a long-lived
 * process (gateway, dashboard): listen for park requests on the store's
 * profile; on one, park the store (in-flight calls finish, connections
 * close, new calls wait at the door), and when the window ends resume it,
 * retrying while the structural operation still holds the gate. Returns
 * undefined when this host cannot offer the socket; windows then refuse,
 * naming this process. `onLost`: what the process does when a park finds
 * commits only a removed -wal held and cannot put them back
 * (HEARTH_GENERATION_LOST), as its own reattach would (the gateway stops
 * and exits 78); the window is refused either way.
 */
export async function acceptWindows(
  store: Store,
  log: ParkingLog,
  onLost?: (err: Error) => void,
): Promise<ParkServer | undefined> {
  // Windows park a SQLite file's users; a PostgreSQL store has no file to free.
  if (!isSqliteStore(store)) return undefined;
  const profile = store.profile;
  return serveParking(profileDir(store.home, profile), {
    park: async (request) => {
      const started = Date.now();
      await pauseReplication(store.path);
      try {
        await store.park();
      } catch (err) {
        // Commits only a removed -wal held, not put back: said loudly here; the window is refused.
        const lost = isHearthError(err, "HEARTH_GENERATION_LOST");
        if (lost) log.error({ event: "store.generation_lost", profile, err }, err.message);
        resumeReplication(store.path);
        if (lost) onLost?.(err);
        throw err;
      }
      log.warn(
        {
          event: "window.parked",
          profile,
          op: request.op,
          by: request.by,
          ms: Date.now() - started,
        },
        `parked for a maintenance window (${request.op} by pid ${request.by})`,
      );
    },
    resume: async (request) => {
      for (let attempt = 1, delay = 50; ; attempt++, delay = Math.min(delay * 2, 2000)) {
        try {
          await store.resume();
          resumeReplication(store.path);
          log.info(
            { event: "window.resumed", profile, op: request.op },
            "resumed after the window",
          );
          return;
        } catch (err) {
          const waiting = isHearthError(err, "HEARTH_MAINTENANCE_RUNNING");
          (waiting ? log.warn : log.error)(
            { event: "window.resume_failed", profile, attempt, error: (err as Error).message },
            waiting
              ? "the structural operation still runs; resuming when it is done"
              : "could not resume after the window; retrying",
          );
          await new Promise((r) => setTimeout(r, delay));
        }
      }
    },
  });
}
