import { useEffect, useState } from "preact/hooks";

/** A few routes, the History API, no library. `state` marks the entry (a pager's, say). */
export function navigate(to: string, state: Record<string, unknown> | null = null): void {
  if (to === window.location.pathname + window.location.search) return;
  window.history.pushState(state, "", to);
  window.dispatchEvent(new PopStateEvent("popstate"));
  window.scrollTo(0, 0);
}

export function useLocation(): { path: string; search: URLSearchParams } {
  const read = () => ({
    path: window.location.pathname,
    search: new URLSearchParams(window.location.search),
  });
  const [loc, setLoc] = useState(read);
  useEffect(() => {
    const on = () => setLoc(read());
    window.addEventListener("popstate", on);
    return () => window.removeEventListener("popstate", on);
  }, []);
  return loc;
}

/** Internal links navigate without a reload; modifier clicks keep the browser's behaviour. */
export function onLinkClick(e: MouseEvent): void {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey)
    return;
  const a = (e.target as HTMLElement).closest("a");
  if (!a || a.target || a.hasAttribute("download")) return;
  const href = a.getAttribute("href");
  if (!href || !href.startsWith("/") || href.startsWith("/api/")) return;
  e.preventDefault();
  navigate(href);
}
