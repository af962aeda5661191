// Small statistics over rounds: median and min–max of values and of the
// per-round ratios hearth/baseline (each ratio taken within one round, so
// both sides saw the same machine noise).

/** Linear-interpolated quantile of an unsorted array, q in [0, 1]. */
export function quantile(values, q) {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

export const median = (values) => quantile(values, 0.5);

/** { median, min, max } of a list of numbers. */
export function spread(values) {
  const finite = values.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN };
  return { median: median(finite), min: Math.min(...finite), max: Math.max(...finite) };
}

/** Per-round ratios a[i] / b[i], summarised. */
export function ratio(a, b) {
  return spread(a.map((v, i) => v / b[i]));
}

/** Latency figures of a list of samples (ms). */
export function latency(samples) {
  return { p50: quantile(samples, 0.5), p99: quantile(samples, 0.99), max: Math.max(...samples) };
}

/** Format a number for the table: 3 significant digits, thousands grouped. */
export function fmt(value, digits = 3) {
  if (value === undefined || value === null || Number.isNaN(value)) return "—";
  if (!Number.isFinite(value)) return "∞";
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString("en-US");
  if (abs === 0) return "0";
  return Number(value.toPrecision(digits)).toString();
}

/** "0.93× (0.90–0.97)" */
export function fmtRatio(r) {
  if (!r || !Number.isFinite(r.median)) return "—";
  return `${fmt(r.median, 2)}× (${fmt(r.min, 2)}–${fmt(r.max, 2)})`;
}

/** Rotate `list` by `round` places: interleaves the order of variants across rounds. */
export function rotate(list, round) {
  const k = round % list.length;
  return [...list.slice(k), ...list.slice(0, k)];
}
