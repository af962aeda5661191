import { useEffect, useRef, useState } from "preact/hooks";
import {
  ApiError,
  apiSessionPath,
  csrf,
  get,
  type Message,
  query,
  type Session,
  servedProfiles,
  sessionPath,
} from "../api";
import { contentText, titleOf } from "../format";
import { useLive, useWatch } from "../live";
import { MessageBody } from "../message";
import { ErrorBanner, Loading } from "../ui";

const TAIL = 50;

/**
 * Talk to the agent: each message goes to the dashboard's POST /api/chat,
 * which relays it to the profile's gateway and streams the gateway's
 * events back (stored, delta…, reply). With a session, the conversation
 * continues there (its platform and chat); without, a new one starts.
 */
export function ChatPage({ profile, id }: { profile?: string; id?: string }) {
  const profiles = servedProfiles();
  const [chosen, setChosen] = useState(profile ?? profiles[0] ?? "default");
  const [session, setSession] = useState<Session | null>(null);
  const [messages, setMessages] = useState<Message[]>([]);
  const [streaming, setStreaming] = useState<string | null>(null);
  const [pending, setPending] = useState<string | null>(null);
  const [text, setText] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [loaded, setLoaded] = useState(!id);
  const bottom = useRef<HTMLDivElement>(null);
  /** The ordinal of the message this turn stored: its reply comes after it. */
  const turnStored = useRef<number | null>(null);
  const sessionId = session?.id ?? id;

  const scroll = () =>
    requestAnimationFrame(() => bottom.current?.scrollIntoView({ block: "end" }));
  const merge = (fresh: Message[]) =>
    setMessages((prev) => {
      const seen = new Set(prev.map((m) => m.id));
      const next = [...prev, ...fresh.filter((m) => !seen.has(m.id))];
      return next.sort((a, b) => a.ordinal - b.ordinal);
    });

  useEffect(() => {
    if (!id || !profile) {
      setSession(null);
      setMessages([]);
      setLoaded(true);
      return;
    }
    const base = apiSessionPath(profile, id);
    setLoaded(false);
    Promise.all([
      get<{ session: Session }>(base),
      get<{ items: Message[] }>(`${base}/messages${query({ limit: TAIL })}`),
    ]).then(
      ([d, page]) => {
        setSession(d.session);
        setMessages([...page.items].reverse());
        setLoaded(true);
        scroll();
      },
      (err) => {
        setError(err);
        setLoaded(true);
      },
    );
  }, [profile, id]);

  useWatch(sessionId ? chosen : undefined, sessionId);
  useLive(
    {
      ready: (d) => {
        if (!sessionId || d.watch?.profile !== chosen || d.watch.sessionId !== sessionId) return;
        get<{ items: Message[] }>(
          `${apiSessionPath(chosen, sessionId)}/messages${query({ limit: TAIL })}`,
        ).then((page) => merge(page.items), setError);
      },
      messages: (d) => {
        if (d.profile !== chosen || !sessionId) return;
        const mine = d.messages.filter((m) => m.sessionId === sessionId);
        if (mine.length > 0) {
          merge(mine);
          scroll();
        }
      },
    },
    [chosen, sessionId],
  );

  const send = async (e: Event) => {
    e.preventDefault();
    const content = text.trim();
    if (!content || pending !== null) return;
    setPending(content);
    turnStored.current = null;
    setStreaming("");
    setError(null);
    setText("");
    try {
      await streamChat(
        { profile: chosen, content, clientId: crypto.randomUUID(), sessionId },
        (event, data) => {
          if (event === "stored") {
            const d = data as { session: Session; message: Message };
            setSession(d.session);
            setPending(null);
            turnStored.current = d.message.ordinal;
            merge([d.message]);
            if (d.session.id !== id)
              window.history.replaceState(
                null,
                "",
                `/chat/${encodeURIComponent(chosen)}/${encodeURIComponent(d.session.id)}`,
              );
          } else if (event === "delta") {
            setStreaming((s) => (s ?? "") + (data as { text: string }).text);
          } else if (event === "reply") {
            const d = data as { session: Session; reply: Message };
            setSession(d.session);
            merge([d.reply]);
            setStreaming(null);
          } else if (event === "error") {
            const err = (data as { error: { code: string; message: string; hint?: string } }).error;
            setError(new ApiError(502, err.code, err.message, err.hint));
          }
          scroll();
        },
      );
    } catch (err) {
      setError(err);
      setText((t) => t || content);
    } finally {
      setPending(null);
      setStreaming(null);
    }
  };

  // The live stream may bring the committed reply before the chat stream's
  // "reply" event ends the streaming: show the reply once, not twice.
  const streamed =
    streaming !== null && replyShown(messages, turnStored.current, streaming) ? null : streaming;

  if (!loaded) return <Loading what="the conversation" />;
  return (
    <section class="chat" aria-labelledby="chat-title">
      <div class="page-head">
        <h1 id="chat-title">{session ? titleOf(session) : "Chat"}</h1>
        {session ? (
          <a class="button" href={sessionPath({ profile: chosen, id: session.id })}>
            Open session
          </a>
        ) : null}
      </div>
      <p class="muted">
        {session
          ? `Talking in ${session.source}${session.chatKey ? ` · ${session.chatKey}` : ""} through the gateway of profile ${chosen}.`
          : "A new conversation with the agent, through the profile's gateway. Replies stream in as the agent writes them."}
      </p>
      <ErrorBanner error={error} onClose={() => setError(null)} />
      <ol class="transcript chat-log" aria-label="Conversation" aria-live="polite">
        {messages.map((m) => (
          <li key={m.id} class={`message ${m.role}`} data-message-id={m.id}>
            <div class="message-head">
              <span class="role">{m.role}</span>
            </div>
            <MessageBody content={m.content} />
          </li>
        ))}
        {pending !== null ? (
          <li class="message user pending">
            <div class="message-head">
              <span class="role">user</span> <span class="muted">sending…</span>
            </div>
            <div class="content plain">{pending}</div>
          </li>
        ) : null}
        {streamed !== null ? (
          <li class="message assistant streaming">
            <div class="message-head">
              <span class="role">assistant</span> <span class="muted">writing…</span>
            </div>
            <div class="content plain">{streamed}</div>
          </li>
        ) : null}
      </ol>
      <div ref={bottom} />
      <form class="composer" onSubmit={(e) => void send(e)}>
        {!id && profiles.length > 1 ? (
          <label>
            Profile{" "}
            <select
              value={chosen}
              onChange={(e) => setChosen((e.target as HTMLSelectElement).value)}
            >
              {profiles.map((p) => (
                <option key={p} value={p}>
                  {p}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        <label class="sr-only" for="chat-input">
          Message
        </label>
        <textarea
          id="chat-input"
          rows={3}
          maxLength={32000}
          value={text}
          placeholder="Write to the agent… (Ctrl+Enter sends)"
          onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && (e.ctrlKey || e.metaKey))
              (e.currentTarget as HTMLTextAreaElement).form?.requestSubmit();
          }}
        />
        <button type="submit" disabled={pending !== null || streaming !== null}>
          {pending !== null || streaming !== null ? "Sending…" : "Send"}
        </button>
      </form>
    </section>
  );
}

/** POST /api/chat and read its server-sent events as they arrive. */
async function streamChat(
  body: { profile: string; content: string; clientId: string; sessionId: string | undefined },
  on: (event: string, data: unknown) => void,
): Promise<void> {
  const res = await fetch("/api/chat", {
    method: "POST",
    credentials: "same-origin",
    headers: {
      "content-type": "application/json",
      accept: "text/event-stream",
      "x-csrf-token": csrf() ?? "",
    },
    body: JSON.stringify(body),
  });
  if (!res.ok || !res.body) {
    const e = (
      (await res.json().catch(() => ({}))) as {
        error?: { code?: string; message?: string; hint?: string };
      }
    ).error;
    throw new ApiError(
      res.status,
      e?.code ?? `HTTP_${res.status}`,
      e?.message ?? res.statusText,
      e?.hint,
    );
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let cut = buffer.indexOf("\n\n");
    while (cut >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let event = "message";
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
      }
      if (data.length > 0) on(event, JSON.parse(data.join("\n")));
      cut = buffer.indexOf("\n\n");
    }
  }
}

/**
 * Whether an assistant message after ordinal `after` already holds `text`:
 * `messages` are in ordinal order, so only the turn's own tail is read, not
 * the whole transcript on every streamed delta.
 */
function replyShown(messages: Message[], after: number | null, text: string): boolean {
  if (after === null) return false;
  for (let i = messages.length - 1; i >= 0 && messages[i]!.ordinal > after; i--) {
    const m = messages[i]!;
    if (m.role === "assistant" && contentText(m.content) === text) return true;
  }
  return false;
}
