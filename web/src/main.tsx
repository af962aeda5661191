import { render } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, can, loadMe, request } from "./api";
import { onLiveState, startLive } from "./live";
import { ActivityPage } from "./pages/Activity";
import { AuditPage } from "./pages/Audit";
import { ChatPage } from "./pages/Chat";
import { HealthPage } from "./pages/Health";
import { JobsPage } from "./pages/Jobs";
import { LogsPage } from "./pages/Logs";
import { SearchPage } from "./pages/Search";
import { ServicesPage } from "./pages/Services";
import { SessionPage } from "./pages/Session";
import { SessionsPage } from "./pages/Sessions";
import { Palette } from "./palette";
import { navigate, onLinkClick, useLocation } from "./router";
import { ErrorBanner, Loading } from "./ui";
import "./style.css";

const NAV = [
  ["/sessions", "Sessions"],
  ["/search", "Search"],
  ["/activity", "Activity"],
  ["/chat", "Chat"],
  ["/services", "Services"],
  ["/logs", "Logs"],
  ["/health", "Health"],
  ["/jobs", "Jobs"],
  ["/audit", "Audit"],
] as const;

/** Pages a login's scope must cover to be shown (the server refuses their API anyway). */
const NEEDS: Partial<Record<string, "chat" | "admin">> = { "/chat": "chat", "/audit": "admin" };

function Route({ path, search }: { path: string; search: URLSearchParams }) {
  const m = /^\/sessions\/([^/]+)\/([^/]+)$/.exec(path);
  if (m)
    return (
      <SessionPage
        profile={decodeURIComponent(m[1]!)}
        id={decodeURIComponent(m[2]!)}
        search={search}
      />
    );
  const c = /^\/chat\/([^/]+)\/([^/]+)$/.exec(path);
  if (c) return <ChatPage profile={decodeURIComponent(c[1]!)} id={decodeURIComponent(c[2]!)} />;
  if (path === "/chat") return <ChatPage />;
  if (path === "/search") return <SearchPage search={search} />;
  if (path === "/health") return <HealthPage />;
  if (path === "/activity") return <ActivityPage search={search} />;
  if (path === "/services") return <ServicesPage />;
  if (path === "/logs") return <LogsPage search={search} />;
  if (path === "/jobs") return <JobsPage />;
  if (path === "/audit") return <AuditPage />;
  return <SessionsPage search={search} />;
}

function App() {
  const { path, search } = useLocation();
  const [ready, setReady] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [palette, setPalette] = useState(false);
  const [live, setLive] = useState("connecting");

  useEffect(() => {
    loadMe().then(() => {
      setReady(true);
      startLive();
    }, setError);
    return onLiveState(setLive);
  }, []);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const typing = (e.target as HTMLElement).closest("input, textarea, select");
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "k") {
        e.preventDefault();
        setPalette((p) => !p);
      } else if (e.key === "/" && !typing) {
        e.preventDefault();
        const box = document.querySelector<HTMLInputElement>("#session-filter, #search-input");
        if (box) box.focus();
        else navigate("/search");
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  useEffect(() => {
    const titles: Record<string, string> = {
      "/search": "Search",
      "/activity": "Activity",
      "/services": "Services",
      "/logs": "Logs",
      "/chat": "Chat",
      "/health": "Health",
      "/jobs": "Jobs",
      "/audit": "Audit",
    };
    document.title = `${titles[path.startsWith("/chat") ? "/chat" : path] ?? "Sessions"} · hearth dashboard`;
  }, [path]);

  // A page change moves focus to the page (as a full load would): a screen reader reads
  // the new page, and Tab starts from its top, not from the link that was followed.
  const firstPath = useRef(path);
  useEffect(() => {
    if (path === firstPath.current) return;
    firstPath.current = "";
    document.getElementById("main")?.focus({ preventScroll: true });
  }, [path]);

  const logout = async () => {
    try {
      await request("POST", "/api/logout");
    } finally {
      window.location.assign("/login");
    }
  };

  const section =
    path.startsWith("/sessions") || path === "/"
      ? "/sessions"
      : path.startsWith("/chat")
        ? "/chat"
        : path;
  return (
    // biome-ignore lint/a11y/useKeyWithClickEvents: delegated link navigation; keyboard activation of links fires click
    // biome-ignore lint/a11y/noStaticElementInteractions: see above
    <div class="shell" onClick={(e) => onLinkClick(e as unknown as MouseEvent)}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/sessions" aria-label="hearth dashboard, sessions">
          <img src="/favicon.svg" alt="" width="22" height="22" /> hearth
        </a>
        <nav aria-label="Main">
          {NAV.filter(([to]) => NEEDS[to] === undefined || can(NEEDS[to])).map(([to, label]) => (
            <a key={to} href={to} aria-current={section === to ? "page" : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <div class="top-right">
          <button
            type="button"
            class="ghost kbd-hint"
            onClick={() => setPalette(true)}
            aria-label="Ctrl K: command palette"
          >
            <kbd>Ctrl</kbd> <kbd>K</kbd>
          </button>
          <span class={`live ${live}`} role="status" aria-live="polite">
            {live === "live" ? "Live" : live === "offline" ? "Offline" : "Connecting…"}
          </span>
          <button type="button" class="ghost" onClick={() => void logout()}>
            Log out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {error ? (
          <ErrorBanner
            error={error instanceof ApiError ? error : new ApiError(0, "CLIENT", String(error))}
          />
        ) : ready ? (
          <Route path={path} search={search} />
        ) : (
          <Loading what="the dashboard" />
        )}
      </main>
      {palette ? <Palette onClose={() => setPalette(false)} /> : null}
    </div>
  );
}

render(<App />, document.getElementById("app")!);
