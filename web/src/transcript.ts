import { useEffect, useRef, useState } from "preact/hooks";
import { get, type Message, query } from "./api";

export const PAGE = 100;
/**
 * Messages kept in memory at most. Reading on past them drops the far end
 * (the newest when reading up, the oldest when reading down), loaded again
 * on the way back: memory is the same after 100 or 20,000 messages.
 */
export const KEEP = 1000;

interface Page {
  items: Message[];
  nextBefore: number | null;
}

/**
 * A session's transcript, read a page at a time (newest first on the
 * server): opened at its newest page, or around one message (`at`, an
 * ordinal: a permalink or a search hit). Older pages load on `loadOlder`,
 * newer ones (after a permalink) on `loadNewer`. Messages are kept oldest
 * first, at most KEEP of them; only the rows in view are rendered
 * (virtual.tsx).
 */
export function useTranscript(
  base: string,
  history: boolean,
  at: number | null,
  /** Called (two frames on, the rows rendered and placed) after a page loaded without error. */
  onLoaded?: () => void,
) {
  const loadedHook = useRef(onLoaded);
  loadedHook.current = onLoaded;
  const [messages, setMessagesState] = useState<Message[]>([]);
  // The messages as last set: each change is computed from it (a page may land between renders).
  const kept = useRef<Message[]>([]);
  const setMessages = (next: Message[]) => {
    kept.current = next;
    setMessagesState(next);
  };
  const [older, setOlder] = useState<number | null>(null);
  /** Whether messages newer than the loaded ones exist (opened at a permalink, or dropped past KEEP). */
  const [newer, setNewerState] = useState(false);
  const newerRef = useRef(false);
  const setNewer = (v: boolean) => {
    newerRef.current = v;
    setNewerState(v);
  };
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const busy = useRef(false);
  const newest = useRef(0);

  const page = (before?: number) =>
    get<Page>(`${base}/messages${query({ limit: PAGE, history, before })}`);

  useEffect(() => {
    setLoaded(false);
    setMessages([]);
    // Around a message: the 100 up to 50 after it, and the newest ordinal (is there more below?).
    Promise.all([page(at === null ? undefined : at + 51), at === null ? null : page()]).then(
      ([p, top]) => {
        const items = [...p.items].reverse();
        newest.current = Math.max(
          top?.items[0]?.ordinal ?? 0,
          items[items.length - 1]?.ordinal ?? 0,
        );
        setMessages(items);
        setOlder(p.nextBefore);
        setNewer((items[items.length - 1]?.ordinal ?? 0) < newest.current);
        setLoaded(true);
        setError(null);
      },
      (err) => {
        setError(err);
        setLoaded(true);
      },
    );
  }, [base, history, at]);

  /** Add newer messages; past KEEP, the oldest go (and are older again). */
  const merge = (mine: Message[]) => {
    const prev = kept.current;
    const seen = new Set(prev.map((m) => m.id));
    const add = mine.filter((m) => !seen.has(m.id));
    if (add.length === 0) return;
    let next = [...prev, ...add].sort((a, b) => a.ordinal - b.ordinal);
    if (next.length > KEEP) {
      next = next.slice(-KEEP);
      setOlder(next[0]!.ordinal);
    }
    setMessages(next);
  };

  /** New messages (live, or the newest page again): merged only when the newest page is loaded. */
  const mergeNewest = (mine: Message[]) => {
    for (const m of mine) newest.current = Math.max(newest.current, m.ordinal);
    if (newerRef.current) return false;
    merge(mine);
    return true;
  };

  /**
   * One load at a time: a call while one runs does nothing. So the caller learns when it ended
   * (onLoaded) and looks again whether it should load the next page: a reader who reached an
   * end while a load ran would otherwise wait for an event that already came.
   */
  const guard = async (fn: () => Promise<void>) => {
    if (busy.current) return;
    busy.current = true;
    let ok = false;
    try {
      await fn();
      ok = true;
    } catch (err) {
      setError(err);
    } finally {
      busy.current = false;
    }
    // Not after an error: a failing page would be asked for again every frame.
    if (ok) requestAnimationFrame(() => requestAnimationFrame(() => loadedHook.current?.()));
  };

  const loadOlder = () =>
    guard(async () => {
      if (older === null) return;
      const p = await page(older);
      const next = [...[...p.items].reverse(), ...kept.current];
      setOlder(p.nextBefore);
      if (next.length <= KEEP) return setMessages(next);
      // Past KEEP: the newest go, loaded again on reaching the bottom.
      setMessages(next.slice(0, KEEP));
      setNewer(true);
    });

  const loadNewer = () =>
    guard(async () => {
      const last = kept.current[kept.current.length - 1]?.ordinal ?? 0;
      // The newest page below last+101 holds every message after `last` up to 100 ordinals on.
      const p = await page(last + PAGE + 1);
      const mine = p.items.filter((m) => m.ordinal > last);
      merge(mine);
      const reached = Math.max(last, ...mine.map((m) => m.ordinal));
      setNewer(reached < newest.current && mine.length > 0);
    });

  const refetchNewest = () =>
    page().then((p) => {
      mergeNewest(p.items);
    }, setError);

  return {
    messages,
    older,
    newer,
    loaded,
    error,
    setError,
    loadOlder,
    loadNewer,
    mergeNewest,
    refetchNewest,
  };
}
