// One row of the results table: a metric measured for hearth and its
// baselines over the same rounds, the per-round ratios and the target.
import { ratio, spread } from "./stats.mjs";

/**
 * row({ workload, metric, unit, better: "higher" | "lower", hearth: [..],
 *       ceiling?: [..], naive?: [..], target?, note?,
 *       baselines?: { ceiling, naive } (names, when not raw/naive better-sqlite3) })
 *
 * target: { text, kind: "ceiling" | "naive" | "absolute", op: ">=" | "<=" | "<",
 *           value, basis: "median" | "worst" }, or a list of them (every one
 *   is judged; the row passes when all pass).
 *   "ceiling" compares the per-round ratio hearth/ceiling, "naive" the ratio
 *   hearth/naive; "absolute" the hearth figure itself. basis "median" takes the median over rounds,
 *   "worst" the worst round (max for "<"/"<=", min for ">=").
 *   applies: false reports the target without judging it (pass: null), for
 *   a quick run whose sizes are not the target's.
 */
export function row(spec) {
  const out = {
    workload: spec.workload,
    metric: spec.metric,
    unit: spec.unit,
    better: spec.better,
    rounds: spec.hearth.length,
    hearth: spread(spec.hearth),
    raw: { hearth: spec.hearth },
  };
  if (spec.ceiling) {
    out.ceiling = spread(spec.ceiling);
    out.vsCeiling = ratio(spec.hearth, spec.ceiling);
    out.raw.ceiling = spec.ceiling;
  }
  if (spec.naive) {
    out.naive = spread(spec.naive);
    out.vsNaive = ratio(spec.hearth, spec.naive);
    out.raw.naive = spec.naive;
  }
  if (spec.baselines) out.baselines = spec.baselines; // what the columns are, when not raw/naive SQLite
  if (spec.naiveNote) out.naiveNote = spec.naiveNote;
  if (spec.note) out.note = spec.note;
  if (Array.isArray(spec.target)) out.targets = spec.target.map((t) => judge(t, out));
  else if (spec.target) out.target = judge(spec.target, out);
  return out;
}

/** The judged targets of a row (none, one or several). */
export function targetsOf(r) {
  return r.targets ?? (r.target ? [r.target] : []);
}

function judge(target, r) {
  const pick = (summary) => {
    if (target.basis !== "worst") return summary.median;
    return target.op === ">=" ? summary.min : summary.max;
  };
  const ok = (figure) =>
    target.op === ">="
      ? figure >= target.value
      : target.op === "<="
        ? figure <= target.value
        : figure < target.value;
  const basis = { ceiling: r.vsCeiling, naive: r.vsNaive, absolute: r.hearth }[target.kind];
  if (!basis) throw new RangeError(`target kind ${target.kind}: no such figure in this row`);
  const figure = pick(basis);
  if (target.applies === false) {
    return { text: target.text, basis: target.basis, figure, pass: null };
  }
  const out = { text: target.text, basis: target.basis, figure, pass: ok(figure) };
  // For an absolute target: would raw better-sqlite3 (the ceiling) meet it on this machine?
  if (target.kind === "absolute" && r.ceiling) {
    out.ceilingFigure = pick(r.ceiling);
    out.ceilingPass = ok(out.ceilingFigure);
  }
  return out;
}

/**
 * The counted cost of one measured call beside its speed (issue 44): CPU
 * per call (process.cpuUsage: every thread of this process), the read
 * and write system calls per call (/proc/self/io) and the garbage
 * collections per 1,000 calls (this thread's heap), from runRounds' results
 * (bench/lib/inproc.mjs) for hearth and whichever of ceiling and naive
 * `res` holds. `what` names the call, as in "10k-message session: tail".
 */
export function costRows({ workload, what, res, baselines }) {
  const pick = (field) => {
    const out = { hearth: res.hearth.map(field) };
    if (res.ceiling) out.ceiling = res.ceiling.map(field);
    if (res.naive) out.naive = res.naive.map(field);
    return out;
  };
  const base = { workload, better: "lower", ...(baselines ? { baselines } : {}) };
  return [
    row({
      ...base,
      metric: `${what}: CPU per call (process.cpuUsage, every thread)`,
      unit: "ms",
      ...pick((r) => r.cpuMs),
    }),
    row({
      ...base,
      metric: `${what}: read + write system calls per call (/proc/self/io)`,
      unit: "calls",
      ...pick((r) => r.io?.syscalls ?? Number.NaN),
    }),
    row({
      ...base,
      metric: `${what}: garbage collections per 1,000 calls (this thread's heap, perf_hooks)`,
      unit: "GCs",
      ...pick((r) => (r.gcs ?? Number.NaN) * 1000),
    }),
  ];
}
