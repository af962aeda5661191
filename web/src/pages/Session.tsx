import { useEffect, useRef, useState } from "preact/hooks";
import {
  apiSessionPath,
  can,
  get,
  type Message,
  query,
  request,
  type Session,
  sessionPath,
} from "../api";
import { ago, contentText, titleOf, when } from "../format";
import { useLive, useWatch } from "../live";
import { navigate } from "../router";
import { Badge, Empty, ErrorBanner, Loading } from "../ui";

interface Detail {
  profile: string;
  session: Session;
  parent: Session | null;
  children: Session[];
}

const PAGE = 100;

/** The session's flags the toolbar toggles: the flag, its button's label when off and when on. */
const TOGGLES = [
  ["pinned", "Pin", "Unpin"],
  ["archived", "Archive", "Unarchive"],
  ["hidden", "Hide", "Unhide"],
] as const;

export function SessionPage({ profile, id }: { profile: string; id: string }) {
  const [detail, setDetail] = useState<Detail | null>(null);
  const [messages, setMessages] = useState<Message[]>([]); // oldest first
  const [older, setOlder] = useState<number | null>(null);
  const [history, setHistory] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [loaded, setLoaded] = useState(false);
  const [renaming, setRenaming] = useState(false);
  const [title, setTitle] = useState("");
  const bottom = useRef<HTMLDivElement>(null);
  const olderButton = useRef<HTMLButtonElement>(null);
  const loadingOlder = useRef(false);
  const settled = useRef(false);
  const base = apiSessionPath(profile, id);

  useEffect(() => {
    setLoaded(false);
    setMessages([]);
    settled.current = false;
    Promise.all([
      get<Detail>(base),
      get<{ items: Message[]; nextBefore: number | null }>(
        `${base}/messages${query({ limit: PAGE, history })}`,
      ),
    ]).then(
      ([d, page]) => {
        setDetail(d);
        setMessages([...page.items].reverse());
        setOlder(page.nextBefore);
        setLoaded(true);
        setError(null);
        requestAnimationFrame(() => {
          bottom.current?.scrollIntoView({ block: "end" });
          settled.current = true;
          if (resync.current) {
            resync.current = false;
            void refetchNewest();
          }
        });
      },
      (err) => {
        setError(err);
        setLoaded(true);
      },
    );
  }, [base, history]);

  // Scrolling up to the top loads the next older page (a long transcript is
  // read a page at a time, newest first; it never loads whole).
  useEffect(() => {
    const el = olderButton.current;
    if (!el) return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting) && settled.current) void loadOlder();
    });
    observer.observe(el);
    return () => observer.disconnect();
  });

  useWatch(profile, id);
  const resync = useRef(false);
  const refetchNewest = () =>
    get<{ items: Message[] }>(`${base}/messages${query({ limit: PAGE, history })}`).then(
      (page) => mergeNewer(page.items),
      setError,
    );
  const mergeNewer = (mine: Message[]) =>
    setMessages((prev) => {
      const seen = new Set(prev.map((m) => m.id));
      const next = [...prev, ...mine.filter((m) => !seen.has(m.id))];
      return next.sort((a, b) => a.ordinal - b.ordinal);
    });
  useLive(
    {
      // The stream now watches this session: fetch the newest page once more, so a message
      // committed between the first load and the stream's start is not missed.
      ready: (d) => {
        if (d.watch?.profile !== profile || d.watch.sessionId !== id) return;
        if (settled.current) refetchNewest();
        else resync.current = true; // the first load is still on its way: after it
      },
      messages: (d) => {
        if (d.profile !== profile) return;
        const mine = d.messages.filter((m) => m.sessionId === id);
        if (mine.length === 0) return;
        mergeNewer(mine);
        requestAnimationFrame(() =>
          bottom.current?.scrollIntoView({ block: "end", behavior: "smooth" }),
        );
      },
      sessions: (d) => {
        if (d.profile !== profile) return;
        const s = d.sessions.find((x) => x.id === id);
        if (s) setDetail((prev) => (prev ? { ...prev, session: s } : prev));
      },
    },
    [profile, id, base, history],
  );

  const loadOlder = async () => {
    if (older === null || loadingOlder.current) return;
    loadingOlder.current = true;
    try {
      const page = await get<{ items: Message[]; nextBefore: number | null }>(
        `${base}/messages${query({ limit: PAGE, history, before: older })}`,
      );
      // Keep the reader's place: what was on screen stays there as older messages are added above.
      const height = document.documentElement.scrollHeight;
      setMessages((prev) => [...[...page.items].reverse(), ...prev]);
      setOlder(page.nextBefore);
      requestAnimationFrame(() => {
        window.scrollBy(0, document.documentElement.scrollHeight - height);
        loadingOlder.current = false;
      });
    } catch (err) {
      setError(err);
      loadingOlder.current = false;
    }
  };

  const change = async (body: Record<string, unknown>) => {
    try {
      const r = await request<{ session: Session }>("PATCH", base, body);
      setDetail((prev) => (prev ? { ...prev, session: r.session } : prev));
      setError(null);
      return true;
    } catch (err) {
      setError(err);
      return false;
    }
  };

  const remove = async () => {
    if (
      !window.confirm(
        "Delete this session and every message in it, history included? This cannot be undone.",
      )
    )
      return;
    try {
      await request("DELETE", base);
      navigate("/sessions");
    } catch (err) {
      setError(err);
    }
  };

  if (!loaded) return <Loading what="the session" />;
  if (!detail) return <ErrorBanner error={error} />;
  const s = detail.session;
  return (
    <section class="session" aria-labelledby="session-title">
      <div class="page-head">
        {renaming ? (
          <form
            class="rename"
            onSubmit={async (e) => {
              e.preventDefault();
              if (await change({ title: title.trim() === "" ? null : title })) setRenaming(false);
            }}
          >
            <label class="sr-only" for="rename-input">
              Title
            </label>
            <input
              id="rename-input"
              value={title}
              maxLength={200}
              onInput={(e) => setTitle((e.target as HTMLInputElement).value)}
              ref={(el) => el?.focus()}
            />
            <button type="submit">Save</button>
            <button type="button" class="ghost" onClick={() => setRenaming(false)}>
              Cancel
            </button>
          </form>
        ) : (
          <h1 id="session-title">{titleOf(s)}</h1>
        )}
        <div class="actions" role="toolbar" aria-label="Session actions">
          {!renaming && can("admin") ? (
            <button
              type="button"
              onClick={() => {
                setTitle(s.title ?? "");
                setRenaming(true);
              }}
            >
              Rename
            </button>
          ) : null}
          {can("admin")
            ? TOGGLES.map(([flag, on, off]) => (
                <button
                  key={flag}
                  type="button"
                  aria-pressed={s[flag]}
                  onClick={() => void change({ [flag]: !s[flag] })}
                >
                  {s[flag] ? off : on}
                </button>
              ))
            : null}
          {s.chatKey && can("chat") ? (
            <a
              class="button"
              href={`/chat/${encodeURIComponent(profile)}/${encodeURIComponent(id)}`}
            >
              Chat
            </a>
          ) : null}
          <a class="button" href={`${base}/export?format=jsonl`} download>
            Export JSONL
          </a>
          <a class="button" href={`${base}/export?format=markdown`} download>
            Export Markdown
          </a>
          {can("admin") ? (
            <button type="button" class="danger" onClick={() => void remove()}>
              Delete
            </button>
          ) : null}
        </div>
      </div>
      <ErrorBanner error={error} onClose={() => setError(null)} />
      <dl class="facts">
        <div>
          <dt>Platform</dt>
          <dd>
            {s.source}
            {s.chatKey ? ` · ${s.chatKey}` : ""}
          </dd>
        </div>
        <div>
          <dt>Profile</dt>
          <dd>{detail.profile}</dd>
        </div>
        <div>
          <dt>State</dt>
          <dd>
            {s.endedAt
              ? `ended ${ago(s.endedAt)}${s.endReason ? ` (${s.endReason})` : ""}`
              : "open"}
            {s.archived ? " · archived" : ""}
            {s.hidden ? " · hidden" : ""}
          </dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>{when(s.createdAt)}</dd>
        </div>
        <div>
          <dt>Messages</dt>
          <dd>
            {s.messageCount} live · {s.tokenCount} tokens
          </dd>
        </div>
        {s.handoff ? (
          <div>
            <dt>Handoff</dt>
            <dd>
              {s.handoff.state}
              {s.handoff.platform ? ` to ${s.handoff.platform}` : ""}
              {s.handoff.error ? ` · ${s.handoff.error}` : ""}
            </dd>
          </div>
        ) : null}
        {detail.parent ? (
          <div>
            <dt>Continues</dt>
            <dd>
              <a href={sessionPath({ profile, id: detail.parent.id })}>{titleOf(detail.parent)}</a>
            </dd>
          </div>
        ) : null}
        {detail.children.length > 0 ? (
          <div>
            <dt>Continued in</dt>
            <dd>
              {detail.children.map((c) => (
                <a key={c.id} href={sessionPath({ profile, id: c.id })}>
                  {titleOf(c)}{" "}
                </a>
              ))}
            </dd>
          </div>
        ) : null}
      </dl>
      <div class="transcript-head">
        <h2>Transcript</h2>
        <label class="toggle">
          <input type="checkbox" checked={history} onChange={() => setHistory(!history)} /> Show
          rewound and compacted history
        </label>
      </div>
      {older !== null ? (
        <button type="button" class="load-older" ref={olderButton} onClick={() => void loadOlder()}>
          Load older messages
        </button>
      ) : null}
      {messages.length === 0 ? (
        <Empty title="No messages">
          <p>
            This session has no {history ? "" : "live "}messages yet. New ones appear here as they
            are stored.
          </p>
        </Empty>
      ) : (
        <ol class="transcript" aria-label="Messages, oldest first">
          {messages.map((m) => (
            <MessageItem key={m.id} m={m} />
          ))}
        </ol>
      )}
      <div ref={bottom} />
    </section>
  );
}

function MessageItem({ m }: { m: Message }) {
  const text = contentText(m.content);
  const folded = m.role === "tool";
  return (
    <li class={`message ${m.role}${m.active ? "" : " history"}`} data-message-id={m.id}>
      <div class="message-head">
        <span class="role">{m.role}</span>
        {m.name ? <span class="name">{m.name}</span> : null}
        {!m.active ? <Badge kind="history">{m.archivedReason ?? "history"}</Badge> : null}
        <time dateTime={new Date(m.createdAt).toISOString()} title={when(m.createdAt)}>
          {ago(m.createdAt)}
        </time>
      </div>
      {folded ? (
        <details>
          <summary>Tool result{m.toolCallId ? ` (${m.toolCallId})` : ""}</summary>
          <pre class="content">{text}</pre>
        </details>
      ) : (
        <div class="content">{text}</div>
      )}
      {m.toolCalls && m.toolCalls.length > 0 ? (
        <details class="tool-calls">
          <summary>
            {m.toolCalls.length} tool call{m.toolCalls.length === 1 ? "" : "s"}
          </summary>
          <pre>{JSON.stringify(m.toolCalls, null, 2)}</pre>
        </details>
      ) : null}
    </li>
  );
}
