import { useEffect, useRef, useState } from "preact/hooks";
import { get, type Message, query } from "./api";

export const PAGE = 100;

interface Page {
  items: Message[];
  nextBefore: number | null;
}

/**
 * A session's transcript, read a page at a time (newest first on the
 * server): opened at its newest page, or around one message (`at`, an
 * ordinal: a permalink or a search hit). Older pages load on `loadOlder`,
 * newer ones (after a permalink) on `loadNewer`. Messages are kept oldest
 * first; only the rows in view are rendered (virtual.tsx).
 */
export function useTranscript(base: string, history: boolean, at: number | null) {
  const [messages, setMessages] = useState<Message[]>([]);
  const [older, setOlder] = useState<number | null>(null);
  /** Whether messages newer than the loaded ones exist (opened at a permalink). */
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

  const merge = (mine: Message[]) =>
    setMessages((prev) => {
      const seen = new Set(prev.map((m) => m.id));
      const add = mine.filter((m) => !seen.has(m.id));
      if (add.length === 0) return prev;
      return [...prev, ...add].sort((a, b) => a.ordinal - b.ordinal);
    });

  /** New messages (live, or the newest page again): merged only when the newest page is loaded. */
  const mergeNewest = (mine: Message[]) => {
    for (const m of mine) newest.current = Math.max(newest.current, m.ordinal);
    if (newerRef.current) return false;
    merge(mine);
    return true;
  };

  const guard = async (fn: () => Promise<void>) => {
    if (busy.current) return;
    busy.current = true;
    try {
      await fn();
    } catch (err) {
      setError(err);
    } finally {
      busy.current = false;
    }
  };

  const loadOlder = () =>
    guard(async () => {
      if (older === null) return;
      const p = await page(older);
      setMessages((prev) => [...[...p.items].reverse(), ...prev]);
      setOlder(p.nextBefore);
    });

  const loadNewer = () =>
    guard(async () => {
      const last = messages[messages.length - 1]?.ordinal ?? 0;
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
