import { HearthError } from "../errors.js";
import { levelName, parseLevel } from "./levels.js";
import { EventRing, type LogEvent } from "./ring.js";

/** How many warn/error events each long-lived process keeps for GET /v1/events. */
export const EVENTS_KEPT = 200;

/** The ring of a process's own warn, error and fatal events. */
export function warningRing(): EventRing {
  return new EventRing(EVENTS_KEPT, 40);
}

/**
 * One event as GET /v1/events shows it (docs/api.md): a fixed set of
 * fields, never the free-form ones (an `err` may name a path; S1).
 */
export interface PublicEvent {
  time: string;
  level: number;
  levelName: string;
  proc: string | null;
  pid: number | null;
  event: string | null;
  msg: string | null;
  code: string | null;
  profile: string | null;
}

const str = (v: unknown) => (typeof v === "string" ? v : null);

export function publicEvent(e: LogEvent): PublicEvent {
  const err = e.err as { code?: unknown } | undefined;
  return {
    time: new Date(e.time).toISOString(),
    level: e.level,
    levelName: levelName(e.level),
    proc: str(e.proc),
    pid: typeof e.pid === "number" ? e.pid : null,
    event: str(e.event),
    msg: str(e.msg),
    code: str(e.code) ?? str(err?.code),
    profile: str(e.profile),
  };
}

/**
 * The body of GET /v1/events?level=warn|error|fatal&limit=N: the process's
 * recent events at or above the level (default warn), oldest first; only
 * those `visible` lets through (a caller scoped to one profile sees events
 * about no other). A bad level or limit is HEARTH_BAD_REQUEST.
 */
export function eventsAnswer(
  ring: EventRing,
  query: { level?: unknown; limit?: unknown },
  visible: (e: PublicEvent) => boolean = () => true,
): { events: PublicEvent[] } {
  let level = 40;
  if (query.level !== undefined) {
    try {
      level = parseLevel(String(query.level));
    } catch {
      throw new HearthError("HEARTH_BAD_REQUEST", "level must be warn, error or fatal", {
        hint: "GET /v1/events?level=warn",
      });
    }
    if (level < 40)
      throw new HearthError("HEARTH_BAD_REQUEST", "only warn, error and fatal events are kept", {
        hint: "GET /v1/events?level=warn",
      });
  }
  const limit = query.limit === undefined ? EVENTS_KEPT : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > EVENTS_KEPT)
    throw new HearthError(
      "HEARTH_BAD_REQUEST",
      `limit must be an integer from 1 to ${EVENTS_KEPT}`,
    );
  return { events: ring.recent(level).map(publicEvent).filter(visible).slice(-limit) };
}
