import { useEffect, useRef, useState } from "preact/hooks";
import { get, query, sessionPath } from "../api";
import { ago } from "../format";
import { navigate } from "../router";
import { Empty, ErrorBanner, Loading } from "../ui";

interface Hit {
  profile: string;
  sessionId: string;
  messageId: number;
  ordinal: number;
  role: string;
  active: boolean;
  snippet: string;
  createdAt: number;
  session: { id: string; title: string | null; source: string } | null;
}

/**
 * The server marks each match with U+E000 … U+E001 (characters no message
 * text is taken for; a `[` or `]` in the text stays text): shown as <mark>,
 * every piece as text.
 */
function Snippet({ text }: { text: string }) {
  const parts: preact.JSX.Element[] = [];
  const re = /\uE000([^\uE000\uE001]*)\uE001/g;
  let last = 0;
  let i = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m.index > last) parts.push(<span key={i++}>{text.slice(last, m.index)}</span>);
    parts.push(<mark key={i++}>{m[1]}</mark>);
    last = m.index + m[0].length;
  }
  if (last < text.length) parts.push(<span key={i++}>{text.slice(last)}</span>);
  return <span class="snippet">{parts}</span>;
}

const PAGE = 50;

export function SearchPage({ search }: { search: URLSearchParams }) {
  const q = search.get("q") ?? "";
  const history = search.get("history") === "true";
  const offsetParam = Number(search.get("offset") ?? 0);
  const offset = Number.isInteger(offsetParam) && offsetParam > 0 ? offsetParam : 0;
  const [text, setText] = useState(q);
  const [hits, setHits] = useState<Hit[] | null>(null);
  const [next, setNext] = useState<number | null>(null);
  const pageUrl = (o: number) =>
    `/search${query({ q, history: history || undefined, offset: o || undefined })}`;
  const [error, setError] = useState<unknown>(null);

  // The box follows the URL when the URL's query changes (Back, a link), never on mount: text
  // typed while the page was still settling would be wiped.
  const shownQ = useRef(q);
  useEffect(() => {
    if (shownQ.current !== q) {
      shownQ.current = q;
      setText(q);
    }
    if (!q.trim()) {
      setHits([]);
      return;
    }
    setHits(null);
    get<{ items: Hit[]; nextOffset: number | null }>(
      `/api/search${query({ q, history: history || undefined, offset: offset || undefined })}`,
    ).then(
      (r) => {
        setHits(r.items);
        setNext(r.nextOffset);
        setError(null);
      },
      (err) => {
        setError(err);
        setHits([]);
      },
    );
  }, [q, history, offset]);

  return (
    <section aria-labelledby="search-title">
      <div class="page-head">
        <h1 id="search-title">Search</h1>
      </div>
      <form
        class="search-box wide"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          navigate(`/search${query({ q: text.trim(), history: history || undefined })}`);
        }}
      >
        <label class="sr-only" for="search-input">
          Search every message
        </label>
        <input
          id="search-input"
          type="search"
          placeholder="Search every message (any text is searched literally)"
          value={text}
          onInput={(e) => setText((e.target as HTMLInputElement).value)}
        />
        <button type="submit">Search</button>
        <label class="toggle">
          <input
            type="checkbox"
            checked={history}
            onChange={() => navigate(`/search${query({ q, history: !history || undefined })}`)}
          />{" "}
          Include history
        </label>
      </form>
      <ErrorBanner error={error} onClose={() => setError(null)} />
      {hits === null ? (
        <Loading what="results" />
      ) : hits.length === 0 ? (
        q ? (
          <Empty title="Nothing found">
            <p>No message contains that text.</p>
          </Empty>
        ) : (
          <Empty title="Search every transcript">
            <p>Type words to find; quotes, stars and operators are searched as plain text.</p>
          </Empty>
        )
      ) : (
        <>
          <ul class="hits" aria-label="Results">
            {hits.map((h) => (
              <li key={`${h.profile}/${h.messageId}`}>
                <a
                  href={`${sessionPath({ profile: h.profile, id: h.sessionId })}${query({
                    history: h.active ? undefined : true,
                    at: h.ordinal,
                  })}`}
                >
                  <span class="title">
                    {h.session?.title ?? `Untitled ${h.sessionId.slice(0, 8)}`}
                  </span>
                  <span class="meta">
                    <span class="hit-profile">{h.profile}</span> · {h.role} ·{" "}
                    {h.session?.source ?? ""} · {ago(h.createdAt)}
                    {h.active ? "" : " · history"}
                  </span>
                  <Snippet text={h.snippet} />
                </a>
              </li>
            ))}
          </ul>
          <nav class="pager" aria-label="Result pages">
            <span class="muted">
              Results {offset + 1}–{offset + hits.length}
            </span>
            {offset > 0 ? (
              <a class="button" href={pageUrl(Math.max(0, offset - PAGE))}>
                Previous
              </a>
            ) : null}
            {next !== null ? (
              <a class="button" href={pageUrl(next)}>
                Next
              </a>
            ) : null}
          </nav>
        </>
      )}
    </section>
  );
}
