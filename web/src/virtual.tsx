import type { ComponentChildren } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";

/** Rows rendered beyond the viewport on each side, in pixels. */
const MARGIN = 1200;
/**
 * Rows already rendered are kept until they are this far outside the viewport (and new ones
 * rendered from MARGIN): a row just rendered is not dropped again in the next frame when its
 * measured height moved the boundary, and frames where only the scroll moved render nothing.
 */
const KEEP_MARGIN = 2 * MARGIN;
/** A row's height before it was ever measured. */
const ESTIMATE = 90;

export interface VirtualHandle {
  /** Scroll so the row of this key is at the end (`end`) or the middle (`center`) of the viewport. */
  scrollTo(key: number, block: "end" | "center"): void;
}

interface Props<T> {
  items: T[];
  keyOf: (item: T) => number;
  /** The row: one <li> (with its key). */
  row: (item: T) => ComponentChildren;
  label: string;
  handle?: { current: VirtualHandle | null };
  /** Where the list opens (once, on mount): this row at the end or the middle of the viewport. */
  initial?: { key: number; block: "end" | "center" };
  /** Called once the opening scroll has settled (rows measured). */
  onSettled?: () => void;
}

/**
 * A list on the page's own scroll that renders only the rows in view plus
 * MARGIN pixels either side; the rest are two spacers whose heights are the
 * measured (or estimated) heights of the rows they stand for. So a
 * transcript of 20,000 loaded messages keeps a few dozen rows in the DOM.
 * Rows added or dropped at either end (pages loaded, or dropped past the
 * transcript's bound) keep the reader's place: the row at the top of the
 * view is scrolled back to its offset before paint; a reader at the end of
 * the page stays at the end while nothing changed below.
 */
export function VirtualList<T>({ items, keyOf, row, label, handle, initial, onSettled }: Props<T>) {
  const list = useRef<HTMLOListElement>(null);
  const heights = useRef(new Map<number, number>());
  const [range, setRange] = useState(() => {
    const at = initial ? items.findIndex((it) => keyOf(it) === initial.key) : -1;
    const i = at >= 0 ? at : items.length - 1;
    return { start: Math.max(0, i - 20), end: Math.min(items.length, i + 20) };
  });
  const [, setVersion] = useState(0);
  const firstKey = useRef<number | undefined>(undefined);
  const lastKeyRef = useRef<number | undefined>(undefined);
  /**
   * The row at the top of the view and its offset from the top of the document, noted after
   * each commit and each scroll frame (before anything moves it: a page button inserted above
   * the list, a spacer resized, rows rendered above with heights other than their estimates).
   */
  const anchor = useRef<{ key: number; y: number } | null>(null);
  const shownBefore = useRef<T[]>([]);
  const previous = useRef<T[]>(items);
  const pending = useRef<{ key: number; block: "end" | "center"; tries: number } | null>(
    initial ? { ...initial, tries: 0 } : null,
  );
  /**
   * Rows (elements) measured, with their border-box height then: a row is measured once, when it
   * is rendered, not again in every commit; the resize observer forgets a row whose size changed
   * (its text wrapped anew, a tool call opened), so the next commit measures it again.
   */
  const sized = useRef(new Map<Element, number>());
  const observer = useRef<ResizeObserver | null>(null);
  const [, setResized] = useState(0);
  const observe = (el: Element) => {
    if (!observer.current && typeof ResizeObserver !== "undefined") {
      observer.current = new ResizeObserver((entries) => {
        let any = false;
        for (const e of entries) {
          const was = sized.current.get(e.target);
          const now = e.borderBoxSize?.[0]?.blockSize ?? e.contentRect.height;
          if (was !== undefined && Math.abs(now - was) > 1) {
            sized.current.delete(e.target);
            any = true;
          }
        }
        if (any) setResized((v) => v + 1);
      });
    }
    observer.current?.observe(el);
  };
  const settled = useRef(onSettled);
  settled.current = onSettled;

  const heightOf = (i: number) => heights.current.get(keyOf(items[i]!)) ?? ESTIMATE;
  const offsets = new Float64Array(items.length + 1);
  for (let i = 0; i < items.length; i++) offsets[i + 1] = offsets[i]! + heightOf(i);
  const indexAt = (y: number) => {
    let lo = 0;
    let hi = items.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (offsets[mid + 1]! <= y) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const listTop = () => (list.current?.getBoundingClientRect().top ?? 0) + window.scrollY;
  const compute = () => {
    const top = window.scrollY - listTop();
    const bottom = top + window.innerHeight;
    const need = Math.min(indexAt(top - MARGIN), items.length);
    const needEnd = Math.min(items.length, indexAt(bottom + MARGIN) + 1);
    const keep = indexAt(top - KEEP_MARGIN);
    const keepEnd = Math.min(items.length, indexAt(bottom + KEEP_MARGIN) + 1);
    setRange((r) => {
      // Each end stays where it is while it covers MARGIN and is within KEEP_MARGIN.
      const start = r.start <= need && r.start >= keep ? r.start : need;
      const end = r.end >= needEnd && r.end <= keepEnd ? r.end : needEnd;
      return r.start === start && r.end === end ? r : { start, end };
    });
  };
  /** The scroll as the last scroll event (or note) saw it: before a clamp the page's height made. */
  const scrolled = useRef(0);
  /**
   * The reader was at the end of the page when last noted, and the last row then (its key): the
   * place to keep is the end, not the top row, while nothing was added or dropped below.
   */
  const atEnd = useRef<{ last: number | undefined; y: number } | null>(null);
  const note = () => {
    const y = window.scrollY;
    scrolled.current = y;
    anchor.current = pending.current ? null : anchorOf(list.current, shownBefore.current, keyOf);
    const bottom = document.documentElement.scrollHeight - window.innerHeight;
    atEnd.current =
      !pending.current && y > 0 && y >= bottom - 1 ? { last: lastKeyRef.current, y } : null;
  };
  const computeRef = useRef(compute);
  computeRef.current = compute;
  const noteRef = useRef(note);
  noteRef.current = note;

  if (handle) {
    handle.current = {
      scrollTo(key, block) {
        pending.current = { key, block, tries: 0 };
        setVersion((v) => v + 1);
      },
    };
  }

  // Rows added above (older pages) or dropped there (the transcript keeps a bounded number):
  // shift the window so the same rows stay rendered.
  const head = items.length > 0 ? keyOf(items[0]!) : undefined;
  const tail = items.length > 0 ? keyOf(items[items.length - 1]!) : undefined;
  lastKeyRef.current = tail;
  let shift = 0;
  if (firstKey.current !== undefined && head !== firstKey.current) {
    const at = items.findIndex((it) => keyOf(it) === firstKey.current);
    if (at > 0) shift = at;
    else if (head !== undefined) {
      const gone = previous.current.findIndex((it) => keyOf(it) === head);
      if (gone > 0) shift = -gone;
    }
  }
  firstKey.current = head;
  if (previous.current !== items) {
    previous.current = items;
    // Forget the heights of rows no longer held (a long read would keep every one).
    if (heights.current.size > 2 * items.length + 200) {
      const held = new Set(items.map(keyOf));
      for (const k of heights.current.keys()) if (!held.has(k)) heights.current.delete(k);
    }
  }
  const start = Math.max(0, Math.min(range.start + shift, items.length));
  const end = Math.min(Math.max(range.end + shift, start), items.length);
  const shown = items.slice(start, end);
  shownBefore.current = shown;

  useLayoutEffect(() => {
    if (shift !== 0) setRange({ start, end });
    const el = list.current;
    if (!el) return;
    const rows = el.querySelectorAll<HTMLElement>(":scope > li:not(.spacer)");
    // A reader at the end of the page stays there while nothing was added or dropped below
    // (rows measured taller than estimated after a jump to the end, a page landing above): the
    // reader's scroll to the end is not undone, and the newer page's button stays in view.
    // Unless the reader scrolled away since (before that scroll's frame noted it): theirs wins.
    const e = atEnd.current;
    const bottom = document.documentElement.scrollHeight - window.innerHeight;
    const pin =
      e !== null &&
      e.last === tail &&
      !pending.current &&
      (Math.abs(window.scrollY - e.y) < 1 || window.scrollY >= bottom - 1);
    const pinned = pin && Math.abs(window.scrollY - bottom) >= 1;
    if (pinned) window.scrollTo(0, bottom);
    // Keep the reader's place: whatever moved it (rows above added or dropped, the page's
    // height clamping the scroll when rows below went), scroll the anchor row back. The
    // correction is a difference added to the scroll as it is now, so a scroll the reader made
    // after the note (before its frame) is kept too.
    const a = pin ? null : anchor.current;
    const held = a ? shown.findIndex((it) => keyOf(it) === a.key) : -1;
    if (a && held >= 0) {
      // Where it is in the document now against where it was: the difference is what moved.
      // From the scroll the reader had: the page's height shrinking may have clamped it since.
      const y = window.scrollY;
      const moved = rows[held]!.getBoundingClientRect().top + y - a.y;
      const max = document.documentElement.scrollHeight - window.innerHeight;
      const from = y >= max - 1 && scrolled.current > y ? scrolled.current : y;
      if (from + moved !== y) window.scrollTo(0, from + moved);
    }
    // Measure the rendered rows: a row's height is the distance to the next one (margins included).
    // Only rows not measured yet (new, or resized since): a scroll frame reads the layout of the
    // rows it added, not of every row in view. Rows gone are no longer observed.
    const now = new Set<Element>(rows);
    for (const el of sized.current.keys())
      if (!now.has(el)) {
        sized.current.delete(el);
        observer.current?.unobserve(el);
      }
    let above = 0;
    let changed = false;
    rows.forEach((r, k) => {
      const item = shown[k];
      const next = r.nextElementSibling as HTMLElement | null;
      if (item === undefined || !next || sized.current.has(r)) return;
      const h = next.offsetTop - r.offsetTop;
      sized.current.set(r, r.offsetHeight);
      observe(r);
      const key = keyOf(item);
      const old = heights.current.get(key) ?? ESTIMATE;
      if (h > 0 && Math.abs(h - old) > 0.5) {
        heights.current.set(key, h);
        changed = true;
        // No anchor row (none was in view): a row that starts above the viewport moved what
        // is in view, keep the place.
        if (!pin && held < 0 && r.getBoundingClientRect().top < 0) above += h - old;
      }
    });
    const p = pending.current;
    if (p) {
      const i = items.findIndex((it) => keyOf(it) === p.key);
      if (i >= 0) {
        let y = 0;
        for (let j = 0; j < i; j++) y += heights.current.get(keyOf(items[j]!)) ?? ESTIMATE;
        const h = heights.current.get(p.key) ?? ESTIMATE;
        const target =
          p.block === "end"
            ? listTop() + y + h - window.innerHeight + 16
            : listTop() + y + h / 2 - window.innerHeight / 2;
        window.scrollTo(0, Math.max(0, target));
      }
      p.tries += 1;
      if (!changed || p.tries > 6) {
        pending.current = null;
        const done = settled.current;
        settled.current = undefined;
        requestAnimationFrame(() => done?.());
      }
      computeRef.current();
      if (changed) setVersion((v) => v + 1);
      return;
    }
    if (above !== 0) window.scrollBy(0, above);
    if (changed || pinned) computeRef.current();
    note();
  });

  useEffect(() => {
    let frame = 0;
    const on = () => {
      scrolled.current = window.scrollY;
      if (frame) return;
      frame = requestAnimationFrame(() => {
        frame = 0;
        noteRef.current();
        computeRef.current();
      });
    };
    window.addEventListener("scroll", on, { passive: true });
    window.addEventListener("resize", on);
    on();
    return () => {
      observer.current?.disconnect();
      window.removeEventListener("scroll", on);
      window.removeEventListener("resize", on);
      cancelAnimationFrame(frame);
    };
  }, []);

  return (
    <ol class="transcript" aria-label={label} ref={list} data-loaded={items.length}>
      <li class="spacer" aria-hidden="true" style={{ height: `${offsets[start]}px` }} />
      {shown.map(row)}
      <li
        class="spacer"
        aria-hidden="true"
        style={{ height: `${offsets[items.length]! - offsets[end]!}px` }}
      />
    </ol>
  );
}

/**
 * The first rendered row not wholly above the viewport, if it is in view (none is when a jump
 * scrolled past every rendered row): its key and its offset from the top of the document.
 */
function anchorOf<T>(
  list: HTMLOListElement | null,
  shown: T[],
  keyOf: (item: T) => number,
): { key: number; y: number } | null {
  if (!list) return null;
  const rows = list.querySelectorAll<HTMLElement>(":scope > li:not(.spacer)");
  // Rows are in document order, so a binary search: a few layout reads, not one per row above.
  let lo = 0;
  let hi = Math.min(rows.length, shown.length);
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (rows[mid]!.getBoundingClientRect().bottom > 0) hi = mid;
    else lo = mid + 1;
  }
  if (lo >= Math.min(rows.length, shown.length)) return null;
  const r = rows[lo]!.getBoundingClientRect();
  return r.top < window.innerHeight ? { key: keyOf(shown[lo]!), y: r.top + window.scrollY } : null;
}
