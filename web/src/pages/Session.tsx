import { useEffect, useRef, useState } from "preact/hooks";
import { apiSessionPath, can, get, query, request, type Session, sessionPath } from "../api";
import { ago, titleOf, when } from "../format";
import { useLive, useWatch } from "../live";
import { MessageItem } from "../message";
import { navigate } from "../router";
import { useTranscript } from "../transcript";
import { Empty, ErrorBanner, Loading } from "../ui";
import { type VirtualHandle, VirtualList } from "../virtual";

interface Detail {
  profile: string;
  session: Session;
  parent: Session | null;
  children: Session[];
}

/** The session's flags the toolbar toggles: the flag, its button's label when off and when on. */
const TOGGLES = [
  ["pinned", "Pin", "Unpin"],
  ["archived", "Archive", "Unarchive"],
  ["hidden", "Hide", "Unhide"],
] as const;

export function SessionPage({
  profile,
  id,
  search,
}: {
  profile: string;
  id: string;
  search: URLSearchParams;
}) {
  const [detail, setDetail] = useState<Detail | null>(null);
  const history = search.get("history") === "true";
  const atParam = search.get("at");
  const at = atParam !== null && /^[0-9]{1,15}$/.test(atParam) ? Number(atParam) : null;
  const [renaming, setRenaming] = useState(false);
  const [title, setTitle] = useState("");
  const [detailError, setDetailError] = useState<unknown>(null);
  const olderButton = useRef<HTMLButtonElement>(null);
  const newerButton = useRef<HTMLButtonElement>(null);
  const list = useRef<VirtualHandle | null>(null);
  const base = apiSessionPath(profile, id);
  const t = useTranscript(base, history, at, () => atEdge());
  const { messages } = t;
  const error = detailError ?? t.error;
  const setError = (e: unknown) => {
    setDetailError(e);
    t.setError(e);
  };
  const here = sessionPath({ profile, id });
  const linkTo = (params: { history?: boolean; at?: number | null }) =>
    `${here}${query({ history: (params.history ?? history) || undefined, at: params.at ?? undefined })}`;

  useEffect(() => {
    get<Detail>(base).then(
      (d) => {
        setDetail(d);
        setDetailError(null);
      },
      (err) => setDetailError(err),
    );
  }, [base]);

  // The list opens at the newest message, or at the linked one (highlighted, focused); pages
  // load on reaching either end only once it settled there.
  const armed = useRef(false);
  const [opening, setOpening] = useState<{ key: number; block: "end" | "center" } | null>(null);
  useEffect(() => {
    armed.current = false;
    setOpening(null);
  }, [base, history, at]);
  if (t.loaded && opening === null && messages.length > 0) {
    const target = at === null ? undefined : messages.find((m) => m.ordinal >= at);
    setOpening(
      target
        ? { key: target.id, block: "center" }
        : { key: messages[messages.length - 1]!.id, block: "end" },
    );
  }
  const settle = () => {
    armed.current = true;
    edgeRef.current();
    if (at !== null)
      document.querySelector<HTMLElement>("li.message.target")?.focus({ preventScroll: true });
  };

  // Reaching the top (or coming within NEAR of it) loads the next older page; the bottom, the
  // next newer one. Looked at when the observer says a button came near, and again after each
  // load: a button still near then (the event came while the load ran, or the page was short)
  // loads the next page.
  const atEdge = () => {
    if (!armed.current) return;
    if (near(olderButton.current)) void t.loadOlder();
    else if (near(newerButton.current)) void t.loadNewer();
  };
  const edgeRef = useRef(atEdge);
  edgeRef.current = atEdge;
  const older = t.older !== null;
  const newer = t.newer;
  useEffect(() => {
    const observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) edgeRef.current();
      },
      { rootMargin: `${NEAR}px 0px` },
    );
    if (olderButton.current) observer.observe(olderButton.current);
    if (newerButton.current) observer.observe(newerButton.current);
    return () => observer.disconnect();
  }, [older, newer, opening !== null, detail !== null]);

  useWatch(profile, id);
  useLive(
    {
      // The stream now watches this session: fetch the newest page once more, so a message
      // committed between the first load and the stream's start is not missed.
      ready: (d) => {
        if (d.watch?.profile !== profile || d.watch.sessionId !== id) return;
        void t.refetchNewest();
      },
      messages: (d) => {
        if (d.profile !== profile) return;
        const mine = d.messages.filter((m) => m.sessionId === id);
        if (mine.length === 0) return;
        const atEnd =
          window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 80;
        if (t.mergeNewest(mine) && atEnd)
          requestAnimationFrame(() => list.current?.scrollTo(mine[mine.length - 1]!.id, "end"));
      },
      sessions: (d) => {
        if (d.profile !== profile) return;
        const s = d.sessions.find((x) => x.id === id);
        if (s) setDetail((prev) => (prev ? { ...prev, session: s } : prev));
      },
    },
    [profile, id, base, history, at],
  );

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

  if (!t.loaded || (!detail && !detailError)) return <Loading what="the session" />;
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
          <input
            type="checkbox"
            checked={history}
            onChange={() => navigate(linkTo({ history: !history, at }))}
          />{" "}
          Show rewound and compacted history
        </label>
      </div>
      {t.older !== null ? (
        <PageButton at={olderButton} load={t.loadOlder} label="Load older messages" />
      ) : null}
      {messages.length === 0 ? (
        <Empty title="No messages">
          <p>
            This session has no {history ? "" : "live "}messages yet. New ones appear here as they
            are stored.
          </p>
        </Empty>
      ) : opening === null ? null : (
        <VirtualList
          items={messages}
          keyOf={(m) => m.id}
          label="Messages, oldest first"
          handle={list}
          initial={opening ?? undefined}
          onSettled={settle}
          row={(m) => (
            <MessageItem
              key={m.id}
              m={m}
              permalink={linkTo({ at: m.ordinal, history: history || !m.active })}
              target={at !== null && m.ordinal === at}
            />
          )}
        />
      )}
      {t.newer ? (
        <PageButton at={newerButton} load={t.loadNewer} label="Load newer messages" />
      ) : null}
    </section>
  );
}

/** Pixels beyond the viewport within which a page button loads its page. */
const NEAR = 400;

/** Whether this element is in the viewport or within NEAR pixels of it. */
function near(el: HTMLElement | null) {
  if (!el) return false;
  const r = el.getBoundingClientRect();
  return r.bottom > -NEAR && r.top < window.innerHeight + NEAR;
}

/** "Load older/newer messages": loads on click, and when it comes into view (the page watches it). */
function PageButton({
  at,
  load,
  label,
}: {
  at: { current: HTMLButtonElement | null };
  load: () => Promise<void>;
  label: string;
}) {
  return (
    <button type="button" class="load-older" ref={at} onClick={() => void load()}>
      {label}
    </button>
  );
}
