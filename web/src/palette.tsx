import { useEffect, useRef, useState } from "preact/hooks";
import { can, get, query, type Session, sessionPath } from "./api";
import { titleOf } from "./format";
import { navigate } from "./router";

interface Item {
  label: string;
  hint: string;
  to: string;
}

const PAGES: Item[] = [
  { label: "Sessions", hint: "page", to: "/sessions" },
  { label: "Search", hint: "page", to: "/search" },
  { label: "Chat", hint: "page", to: "/chat" },
  { label: "Health", hint: "page", to: "/health" },
  { label: "Jobs", hint: "page", to: "/jobs" },
  { label: "Audit", hint: "page", to: "/audit" },
];

/** Ctrl+K / ⌘K: jump to a session by title, run a search, or open a page. */
export function Palette({ onClose }: { onClose: () => void }) {
  const [text, setText] = useState("");
  const [sessions, setSessions] = useState<Session[]>([]);
  const [active, setActive] = useState(0);
  const input = useRef<HTMLInputElement>(null);

  useEffect(() => input.current?.focus(), []);
  useEffect(() => {
    const t = window.setTimeout(() => {
      get<{ items: Session[] }>(
        `/api/sessions${query({ q: text.trim(), limit: 8, state: "all" })}`,
      ).then(
        (r) => setSessions(r.items),
        () => setSessions([]),
      );
    }, 120);
    return () => window.clearTimeout(t);
  }, [text]);

  const t = text.trim();
  const items: Item[] = [
    ...(t
      ? [{ label: `Search messages for “${t}”`, hint: "search", to: `/search${query({ q: t })}` }]
      : []),
    ...sessions.map((s) => ({
      label: titleOf(s),
      hint: `${s.source} · ${s.profile}`,
      to: sessionPath(s),
    })),
    ...PAGES.filter(
      (p) => (p.to !== "/audit" || can("admin")) && p.label.toLowerCase().includes(t.toLowerCase()),
    ),
  ];
  const go = (item: Item | undefined) => {
    if (!item) return;
    onClose();
    navigate(item.to);
  };

  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: a click outside the dialog closes it; Escape does the same from the keyboard
    <div class="palette-backdrop" onClick={onClose} role="presentation">
      <div
        class="palette"
        role="dialog"
        aria-modal="true"
        aria-label="Command palette"
        onClick={(e) => e.stopPropagation()}
        onKeyDown={(e) => {
          if (e.key === "Escape") onClose();
          else if (e.key === "ArrowDown") {
            e.preventDefault();
            setActive((a) => Math.min(items.length - 1, a + 1));
          } else if (e.key === "ArrowUp") {
            e.preventDefault();
            setActive((a) => Math.max(0, a - 1));
          } else if (e.key === "Enter") {
            e.preventDefault();
            go(items[active]);
          }
        }}
      >
        <label class="sr-only" for="palette-input">
          Jump to a session, search, or open a page
        </label>
        <input
          id="palette-input"
          ref={input}
          placeholder="Jump to a session, search, or open a page…"
          value={text}
          role="combobox"
          aria-expanded="true"
          aria-controls="palette-list"
          aria-activedescendant={items[active] ? `palette-${active}` : undefined}
          onInput={(e) => {
            setText((e.target as HTMLInputElement).value);
            setActive(0);
          }}
        />
        <div id="palette-list" role="listbox" aria-label="Results">
          {items.map((item, i) => (
            <div
              id={`palette-${i}`}
              tabIndex={-1}
              key={`${item.to}-${i}`}
              role="option"
              aria-selected={i === active}
              class={i === active ? "active" : ""}
              onClick={() => go(item)}
              onKeyDown={() => undefined}
            >
              <span>{item.label}</span>
              <span class="muted">{item.hint}</span>
            </div>
          ))}
        </div>
      </div>
    </div>
  );
}
