import { useEffect } from "preact/hooks";
import type { Message, Session } from "./api";

export type LiveHandlers = {
  /** The stream (re)connected: whatever was committed while it was down is not on it. */
  ready?: (d: { watch: { profile: string; sessionId: string } | null }) => void;
  messages?: (d: { profile: string; messages: Message[] }) => void;
  sessions?: (d: { profile: string; sessions: Session[] }) => void;
  change?: (d: { profile: string }) => void;
};

const listeners = new Set<LiveHandlers>();
let source: EventSource | undefined;
let state: "connecting" | "live" | "offline" = "connecting";
const stateListeners = new Set<(s: typeof state) => void>();

function setState(s: typeof state) {
  state = s;
  for (const l of stateListeners) l(s);
}

/** The session whose messages the stream carries (the page showing it), as `profile/id`. */
let watching: string | null = null;

/**
 * One EventSource for the whole app (the dashboard's /api/events), fanned
 * out to the pages. Every stream gets `change` (lists reload); messages
 * arrive only for the session a page watches (`watchSession`).
 */
export function startLive(): void {
  if (source) return;
  source = new EventSource(
    watching ? `/api/events?watch=${encodeURIComponent(watching)}` : "/api/events",
  );
  source.addEventListener("ready", (e) => {
    setState("live");
    const data = JSON.parse((e as MessageEvent<string>).data);
    for (const l of listeners) l.ready?.(data);
  });
  source.addEventListener("error", () =>
    setState(source?.readyState === EventSource.CLOSED ? "offline" : "connecting"),
  );
  for (const kind of ["messages", "sessions", "change"] as const) {
    source.addEventListener(kind, (e) => {
      const data = JSON.parse((e as MessageEvent<string>).data);
      for (const l of listeners) (l[kind] as ((d: unknown) => void) | undefined)?.(data);
    });
  }
}

/** Watch one session's messages while the calling page is mounted (reconnects the stream). */
export function useWatch(profile: string | undefined, sessionId: string | undefined): void {
  useEffect(() => {
    if (!profile || !sessionId) return;
    const key = `${profile}/${sessionId}`;
    rewatch(key);
    return () => {
      if (watching === key) rewatch(null);
    };
  }, [profile, sessionId]);
}

function rewatch(key: string | null): void {
  if (watching === key) return;
  watching = key;
  if (!source) return;
  source.close();
  source = undefined;
  startLive();
}

export function useLive(handlers: LiveHandlers, deps: unknown[]): void {
  useEffect(() => {
    listeners.add(handlers);
    return () => {
      listeners.delete(handlers);
    };
  }, deps);
}

export function onLiveState(fn: (s: typeof state) => void): () => void {
  stateListeners.add(fn);
  fn(state);
  return () => stateListeners.delete(fn);
}
