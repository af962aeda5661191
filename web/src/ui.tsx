import type { ComponentChildren } from "preact";
import { ApiError } from "./api";

/** An error as people need it: what failed, its stable code, and the way out. */
export function ErrorBanner({ error, onClose }: { error: unknown; onClose?: () => void }) {
  if (!error) return null;
  const e =
    error instanceof ApiError
      ? error
      : new ApiError(0, "CLIENT", error instanceof Error ? error.message : String(error));
  return (
    <div class="banner error" role="alert">
      <div>
        <code class="code">{e.code}</code> <span>{e.message}</span>
        {e.hint ? (
          <div class="hint">
            Try: <code>{e.hint}</code>
          </div>
        ) : null}
      </div>
      {onClose ? (
        <button type="button" class="ghost" onClick={onClose} aria-label="Dismiss error">
          ×
        </button>
      ) : null}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <h2>{title}</h2>
      {children}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="loading" aria-live="polite">
      Loading {what}…
    </p>
  );
}

export function Badge({ kind, children }: { kind: string; children: ComponentChildren }) {
  return <span class={`badge ${kind}`}>{children}</span>;
}

/**
 * A table that may scroll sideways (phones): focusable, so a keyboard can
 * scroll it, and named (axe: scrollable-region-focusable).
 */
export function TableWrap({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard
    <div class="table-wrap" tabIndex={0} role="region" aria-label={label}>
      {children}
    </div>
  );
}
