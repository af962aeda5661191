import { useEffect } from "preact/hooks";
import type { Message, Session } from "./api";

export type LiveHandlers = {
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

/** One EventSource for the whole app (the dashboard's /api/events), fanned out to the pages. */
export function startLive(): void {
  if (source) return;
  source = new EventSource("/api/events");
  source.addEventListener("ready", () => setState("live"));
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
