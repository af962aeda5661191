import { useState } from "preact/hooks";
import { bytes } from "./format";

export interface Sample {
  at: number;
  databaseBytes: number;
  walBytes: number;
}

export interface Day {
  day: number;
  messages: number;
}

const W = 640;
const H = 150;
const PAD = { left: 64, right: 12, top: 10, bottom: 24 };

const dayLabel = (ms: number) =>
  new Date(ms).toLocaleDateString(undefined, { month: "short", day: "numeric" });

/** Database and WAL size over time: two lines on one byte scale (hand-made SVG, no chart library). */
export function SizeChart({ samples }: { samples: Sample[] }) {
  if (samples.length === 0) return <p class="muted">No samples yet.</p>;
  const t0 = samples[0]!.at;
  const t1 = Math.max(samples[samples.length - 1]!.at, t0 + 1);
  const top = Math.max(1, ...samples.map((s) => Math.max(s.databaseBytes, s.walBytes)));
  const x = (t: number) => PAD.left + ((t - t0) / (t1 - t0)) * (W - PAD.left - PAD.right);
  const y = (v: number) => PAD.top + (1 - v / top) * (H - PAD.top - PAD.bottom);
  const line = (pick: (s: Sample) => number) =>
    samples.map((s) => `${x(s.at).toFixed(1)},${y(pick(s)).toFixed(1)}`).join(" ");
  const last = samples[samples.length - 1]!;
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-label={`Database and WAL size over time: now ${bytes(last.databaseBytes)} and ${bytes(last.walBytes)}, at most ${bytes(top)}`}
      >
        <line class="axis" x1={PAD.left} y1={y(0)} x2={W - PAD.right} y2={y(0)} />
        <line class="grid" x1={PAD.left} y1={y(top)} x2={W - PAD.right} y2={y(top)} />
        <text class="tick" x={PAD.left - 6} y={y(top) + 4} text-anchor="end">
          {bytes(top)}
        </text>
        <text class="tick" x={PAD.left - 6} y={y(0) + 4} text-anchor="end">
          0
        </text>
        <text class="tick" x={PAD.left} y={H - 6}>
          {dayLabel(t0)}
        </text>
        <text class="tick" x={W - PAD.right} y={H - 6} text-anchor="end">
          {dayLabel(t1)}
        </text>
        {samples.length === 1 ? (
          <>
            <circle class="db" cx={x(last.at)} cy={y(last.databaseBytes)} r="3" />
            <circle class="wal" cx={x(last.at)} cy={y(last.walBytes)} r="3" />
          </>
        ) : (
          <>
            <polyline class="db" points={line((s) => s.databaseBytes)} />
            <polyline class="wal" points={line((s) => s.walBytes)} />
          </>
        )}
      </svg>
      <figcaption>
        <span class="key db">Database</span> <span class="key wal">WAL</span> · {samples.length}{" "}
        sample{samples.length === 1 ? "" : "s"}
      </figcaption>
    </figure>
  );
}

/**
 * Messages stored per day: bars. Pointing at a day shows its value above
 * the chart (and highlights the bar); the page's table has every figure.
 */
export function MessagesChart({ days }: { days: Day[] }) {
  const [hover, setHover] = useState<number | null>(null);
  if (days.length === 0) return <p class="muted">No samples yet.</p>;
  const top = Math.max(1, ...days.map((d) => d.messages));
  const slot = (W - PAD.left - PAD.right) / days.length;
  const barW = Math.max(2, Math.min(40, slot * 0.7));
  const y = (v: number) => PAD.top + (1 - v / top) * (H - PAD.top - PAD.bottom);
  const total = days.reduce((a, d) => a + d.messages, 0);
  // The day under the pointer: its column, from the pointer's x in the chart's own units.
  const point = (e: MouseEvent) => {
    const box = (e.currentTarget as SVGSVGElement).getBoundingClientRect();
    const at = ((e.clientX - box.left) / box.width) * W;
    const i = Math.floor((at - PAD.left) / slot);
    setHover(i >= 0 && i < days.length ? i : null);
  };
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        onMouseMove={point}
        onMouseLeave={() => setHover(null)}
        aria-label={`Messages stored per day over ${days.length} day(s): ${total} in all, at most ${top} in a day`}
      >
        <line class="axis" x1={PAD.left} y1={y(0)} x2={W - PAD.right} y2={y(0)} />
        <text class="tick" x={PAD.left - 6} y={y(top) + 4} text-anchor="end">
          {top.toLocaleString()}
        </text>
        <text class="tick" x={PAD.left - 6} y={y(0) + 4} text-anchor="end">
          0
        </text>
        {days.map((d, i) => {
          const cx = PAD.left + slot * (i + 0.5);
          return (
            <g key={d.day} class={hover === i ? "day hover" : "day"}>
              {/* The whole day's column answers the pointer, not only its bar. */}
              <rect
                class="hit"
                x={cx - slot / 2}
                y={PAD.top}
                width={slot}
                height={H - PAD.top - PAD.bottom}
              />
              <rect
                class="bar"
                x={cx - barW / 2}
                y={y(d.messages)}
                width={barW}
                height={Math.max(0, y(0) - y(d.messages))}
              >
                <title>
                  {dayLabel(d.day)}: {d.messages.toLocaleString()} messages
                </title>
              </rect>
            </g>
          );
        })}
        <text class="tick" x={PAD.left} y={H - 6}>
          {dayLabel(days[0]!.day)}
        </text>
        <text class="tick" x={W - PAD.right} y={H - 6} text-anchor="end">
          {dayLabel(days[days.length - 1]!.day)}
        </text>
      </svg>
      <figcaption>
        Messages stored per day · {total.toLocaleString()} in all
        <output class="readout">
          {hover !== null && days[hover]
            ? ` · ${dayLabel(days[hover]!.day)}: ${days[hover]!.messages.toLocaleString()} messages`
            : ""}
        </output>
      </figcaption>
    </figure>
  );
}
