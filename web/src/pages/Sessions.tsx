import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { can, get, query, request, type Session, servedProfiles, sessionPath } from "../api";
import { ago, titleOf } from "../format";
import { useLive } from "../live";
import { navigate } from "../router";

/** The sessions list is read again at most this often while changes keep coming. */
const REFRESH_MS = 700;

import { Badge, Empty, ErrorBanner, Loading } from "../ui";

const STATES = [
  ["visible", "Visible"],
  ["open", "Open"],
  ["ended", "Ended"],
  ["pinned", "Pinned"],
  ["archived", "Archived"],
  ["hidden", "Hidden"],
  ["all", "All"],
] as const;

const SINCE = [
  ["", "Any time"],
  ["1", "Last 24 hours"],
  ["7", "Last 7 days"],
  ["30", "Last 30 days"],
] as const;

interface Page {
  items: Session[];
  nextCursor: string | null;
}

export function SessionsPage({ search }: { search: URLSearchParams }) {
  const filters = {
    profile: search.get("profile") ?? "",
    platform: search.get("platform") ?? "",
    state: search.get("state") ?? "visible",
    q: search.get("q") ?? "",
    days: search.get("days") ?? "",
  };
  const [items, setItems] = useState<Session[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [platforms, setPlatforms] = useState<string[]>([]);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [text, setText] = useState(filters.q);
  const [fresh, setFresh] = useState(false);
  const listRef = useRef<HTMLUListElement>(null);
  const key = JSON.stringify(filters);
  // The page is in the URL (`cursor`): Back returns to the newer page, a link opens this one.
  const cursor = search.get("cursor") ?? undefined;
  const urlWith = (name: string, value: string | undefined) => {
    const s = new URLSearchParams(search);
    if (value) s.set(name, value);
    else s.delete(name);
    return `/sessions${s.toString() ? `?${s}` : ""}`;
  };

  const load = useCallback(async () => {
    try {
      const since = filters.days ? Date.now() - Number(filters.days) * 86_400_000 : undefined;
      const page = await get<Page>(
        `/api/sessions${query({ profile: filters.profile, platform: filters.platform, state: filters.state, q: filters.q, cursor, since, limit: 50 })}`,
      );
      setItems(page.items);
      setNext(page.nextCursor);
      setError(null);
      setFresh(false);
    } catch (err) {
      setError(err);
    }
  }, [key, cursor]);

  useEffect(() => {
    setItems(null);
    void load();
  }, [load]);
  useEffect(() => {
    setSelected(new Set());
    setText(filters.q);
  }, [key]);
  useEffect(() => {
    get<{ platforms: string[] }>("/api/platforms").then((r) => setPlatforms(r.platforms), setError);
  }, []);

  // Live: the first page follows activity; later pages say there is news. Beside a busy
  // gateway a change comes every poll: the page is read again at most every REFRESH_MS
  // (a commit still shows within about a second), never once per change.
  const timer = useRef<number | undefined>(undefined);
  const lastRefresh = useRef(0);
  useLive(
    {
      change: () => {
        if (cursor !== undefined) return setFresh(true);
        if (timer.current !== undefined) return; // one refresh is already due
        const wait = Math.max(150, lastRefresh.current + REFRESH_MS - Date.now());
        timer.current = window.setTimeout(() => {
          timer.current = undefined;
          lastRefresh.current = Date.now();
          void load();
        }, wait);
      },
    },
    [cursor, load],
  );
  useEffect(() => () => window.clearTimeout(timer.current), []);

  const setFilter = (name: string, value: string) => {
    const s = new URLSearchParams(search);
    if (value) s.set(name, value);
    else s.delete(name);
    s.delete("cursor");
    navigate(`/sessions${s.toString() ? `?${s}` : ""}`);
  };

  const toggle = (s: Session) => {
    const k = `${s.profile}/${s.id}`;
    const copy = new Set(selected);
    if (copy.has(k)) copy.delete(k);
    else copy.add(k);
    setSelected(copy);
  };

  const bulk = async (action: "archive" | "unarchive") => {
    const sessions = [...selected].map((k) => {
      const [profile, ...rest] = k.split("/");
      return { profile: profile!, id: rest.join("/") };
    });
    try {
      await request("POST", "/api/sessions/bulk", { action, sessions });
      setSelected(new Set());
      await load();
    } catch (err) {
      setError(err);
    }
  };

  const onKey = (e: KeyboardEvent) => {
    const rows = [...(listRef.current?.querySelectorAll<HTMLAnchorElement>("a.row-link") ?? [])];
    const i = rows.indexOf(document.activeElement as HTMLAnchorElement);
    if (e.key === "ArrowDown" || e.key === "j") {
      e.preventDefault();
      rows[Math.min(rows.length - 1, i + 1)]?.focus();
    } else if (e.key === "ArrowUp" || e.key === "k") {
      e.preventDefault();
      rows[Math.max(0, i - 1)]?.focus();
    }
  };

  const profiles = servedProfiles();
  return (
    <section aria-labelledby="sessions-title">
      <div class="page-head">
        <h1 id="sessions-title">Sessions</h1>
        <form
          class="search-box"
          role="search"
          onSubmit={(e) => {
            e.preventDefault();
            setFilter("q", text.trim());
          }}
        >
          <label class="sr-only" for="session-filter">
            Filter sessions by title or id
          </label>
          <input
            id="session-filter"
            type="search"
            placeholder="Filter by title or id  ( / )"
            value={text}
            onInput={(e) => setText((e.target as HTMLInputElement).value)}
          />
        </form>
      </div>
      <div class="filters">
        {profiles.length > 1 ? (
          <label>
            Profile
            <select
              value={filters.profile}
              onChange={(e) => setFilter("profile", (e.target as HTMLSelectElement).value)}
            >
              <option value="">All profiles</option>
              {profiles.map((p) => (
                <option key={p} value={p}>
                  {p}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        <label>
          Platform
          <select
            value={filters.platform}
            onChange={(e) => setFilter("platform", (e.target as HTMLSelectElement).value)}
          >
            <option value="">All platforms</option>
            {platforms.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <label>
          State
          <select
            value={filters.state}
            onChange={(e) => setFilter("state", (e.target as HTMLSelectElement).value)}
          >
            {STATES.map(([v, label]) => (
              <option key={v} value={v}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Active
          <select
            value={filters.days}
            onChange={(e) => setFilter("days", (e.target as HTMLSelectElement).value)}
          >
            {SINCE.map(([v, label]) => (
              <option key={v} value={v}>
                {label}
              </option>
            ))}
          </select>
        </label>
        {selected.size > 0 && can("admin") ? (
          <div class="bulk" role="group" aria-label="Selected sessions">
            <span>{selected.size} selected</span>
            <button type="button" onClick={() => void bulk("archive")}>
              Archive
            </button>
            <button type="button" class="ghost" onClick={() => void bulk("unarchive")}>
              Unarchive
            </button>
          </div>
        ) : null}
      </div>
      <ErrorBanner error={error} onClose={() => setError(null)} />
      {fresh ? (
        <div class="banner info" role="status">
          New activity.{" "}
          <button type="button" class="link" onClick={() => navigate(urlWith("cursor", undefined))}>
            Back to the newest
          </button>
        </div>
      ) : null}
      {items === null ? (
        <Loading what="sessions" />
      ) : items.length === 0 ? (
        <Empty
          title={
            filters.q || filters.platform || filters.state !== "visible"
              ? "No session matches"
              : "No sessions yet"
          }
        >
          <p>
            {filters.q || filters.platform || filters.state !== "visible"
              ? "Change the filters to see more."
              : "Sessions appear here as soon as the gateway or the CLI stores a message."}
          </p>
        </Empty>
      ) : (
        <ul
          class="sessions"
          ref={listRef}
          onKeyDown={onKey}
          aria-label="Sessions, newest activity first"
        >
          {items.map((s) => (
            <li
              key={`${s.profile}/${s.id}`}
              class={s.archived ? "archived" : ""}
              data-session={s.id}
            >
              {can("admin") ? (
                <input
                  type="checkbox"
                  aria-label={`Select ${titleOf(s)}`}
                  checked={selected.has(`${s.profile}/${s.id}`)}
                  onChange={() => toggle(s)}
                />
              ) : null}
              <a class="row-link" href={sessionPath(s)}>
                <span class="title">
                  {s.pinned ? (
                    <span class="pin" title="pinned">
                      ★ <span class="sr-only">pinned:</span>
                    </span>
                  ) : null}
                  {titleOf(s)}
                </span>
                <span class="meta">
                  <Badge kind="platform">{s.source}</Badge>
                  {profiles.length > 1 ? <Badge kind="profile">{s.profile}</Badge> : null}
                  {s.endedAt ? <Badge kind="ended">ended</Badge> : <Badge kind="open">open</Badge>}
                  {s.archived ? <Badge kind="archived">archived</Badge> : null}
                  {s.hidden ? <Badge kind="hidden">hidden</Badge> : null}
                  {s.handoff ? <Badge kind="handoff">handoff {s.handoff.state}</Badge> : null}
                  <span>{s.messageCount} messages</span>
                  <time dateTime={new Date(s.lastActivityAt).toISOString()}>
                    {ago(s.lastActivityAt)}
                  </time>
                </span>
              </a>
            </li>
          ))}
        </ul>
      )}
      <nav class="pager" aria-label="Pages">
        <button
          type="button"
          disabled={cursor === undefined}
          onClick={() =>
            (window.history.state as { pager?: boolean } | null)?.pager
              ? window.history.back()
              : navigate(urlWith("cursor", undefined))
          }
        >
          ← Newer
        </button>
        <button
          type="button"
          disabled={!next}
          onClick={() => next && navigate(urlWith("cursor", next), { pager: true })}
        >
          Older →
        </button>
      </nav>
    </section>
  );
}
