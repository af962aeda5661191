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

/** Messages stored per day: bars. */
export function MessagesChart({ days }: { days: Day[] }) {
  if (days.length === 0) return <p class="muted">No samples yet.</p>;
  const top = Math.max(1, ...days.map((d) => d.messages));
  const slot = (W - PAD.left - PAD.right) / days.length;
  const barW = Math.max(2, Math.min(40, slot * 0.7));
  const y = (v: number) => PAD.top + (1 - v / top) * (H - PAD.top - PAD.bottom);
  const total = days.reduce((a, d) => a + d.messages, 0);
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${W} ${H}`}
        role="img"
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
            <rect
              key={d.day}
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
          );
        })}
        <text class="tick" x={PAD.left} y={H - 6}>
          {dayLabel(days[0]!.day)}
        </text>
        <text class="tick" x={W - PAD.right} y={H - 6} text-anchor="end">
          {dayLabel(days[days.length - 1]!.day)}
        </text>
      </svg>
      <figcaption>Messages stored per day · {total.toLocaleString()} in all</figcaption>
    </figure>
  );
}
