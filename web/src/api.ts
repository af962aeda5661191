/** The dashboard's JSON API, as the pages use it. Errors carry the server's HEARTH_ code. */

export interface Session {
  id: string;
  profile: string;
  source: string;
  chatKey: string | null;
  title: string | null;
  createdAt: number;
  updatedAt: number;
  lastActivityAt: number;
  endedAt: number | null;
  endReason: string | null;
  parentId: string | null;
  pinned: boolean;
  archived: boolean;
  hidden: boolean;
  handoff: { state: string; platform: string | null; error: string | null } | null;
  messageCount: number;
  tokenCount: number;
}

export interface Message {
  id: number;
  sessionId: string;
  ordinal: number;
  role: "system" | "user" | "assistant" | "tool";
  content: unknown;
  name: string | null;
  toolCalls: unknown[] | null;
  toolCallId: string | null;
  createdAt: number;
  active: boolean;
  archivedReason: string | null;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}

let csrfToken: string | undefined;
let profiles: string[] = [];
type Scope = "read" | "chat" | "admin";
const SCOPES: readonly Scope[] = ["read", "chat", "admin"];
let scope: Scope = "read";
let allProfiles = false;

/** The session's CSRF token, for changes sent without request() (the chat's stream). */
export function csrf(): string | undefined {
  return csrfToken;
}

export function servedProfiles(): string[] {
  return profiles;
}

/** Whether this is the operator's own all-profiles login (home-wide changes, like pausing a job). */
export function isAllProfiles(): boolean {
  return allProfiles;
}

/**
 * Whether this login's scope covers `need` (admin implies chat implies
 * read). Actions it does not cover are not shown; the server refuses them
 * anyway (HEARTH_SCOPE_DENIED).
 */
export function can(need: Scope): boolean {
  return SCOPES.indexOf(scope) >= SCOPES.indexOf(need);
}

/** Fetch /api/me once: the CSRF token for changes, the profiles this login sees, its scope. */
export async function loadMe(): Promise<void> {
  const me = await request<{
    csrfToken: string;
    profiles: string[];
    scope: Scope;
    allProfiles?: boolean;
  }>("GET", "/api/me");
  csrfToken = me.csrfToken;
  profiles = me.profiles;
  scope = SCOPES.includes(me.scope) ? me.scope : "read";
  allProfiles = me.allProfiles === true;
}

export async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (method !== "GET" && csrfToken) headers["x-csrf-token"] = csrfToken;
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      credentials: "same-origin",
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (err) {
    throw new ApiError(0, "NETWORK", `the dashboard did not answer (${String(err)})`);
  }
  if (res.status === 401) {
    window.location.assign("/login");
    throw new ApiError(401, "HEARTH_UNAUTHORIZED", "logged out");
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    throw new ApiError(res.status, "BAD_RESPONSE", `unexpected answer (${res.status})`);
  }
  if (!res.ok) {
    const e = (json as { error?: { code?: string; message?: string; hint?: string } }).error ?? {};
    throw new ApiError(
      res.status,
      e.code ?? `HTTP_${res.status}`,
      e.message ?? res.statusText,
      e.hint,
    );
  }
  return json as T;
}

export const get = <T>(path: string) => request<T>("GET", path);

export function query(
  params: Record<string, string | number | boolean | undefined | null>,
): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : "";
}

export function sessionPath(s: { profile: string; id: string }): string {
  return `/sessions/${encodeURIComponent(s.profile)}/${encodeURIComponent(s.id)}`;
}

export function apiSessionPath(profile: string, id: string): string {
  return `/api/sessions/${encodeURIComponent(profile)}/${encodeURIComponent(id)}`;
}
