// A tiny horizontal bar chart of ratios, on a log2 axis centred on 1×.
// Each metric gets two bars (hearth/ceiling, hearth/naive) with a min–max
// whisker; a bar is green when hearth is at least as good as that baseline
// in the metric's own direction (higher or lower is better), red otherwise.
import { fmt } from "./stats.mjs";

const esc = (s) =>
  String(s).replace(
    /[&<>"]/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c],
  );

/**
 * bars: [{ label, better: "higher" | "lower", vsCeiling?: {median,min,max}, vsNaive?: {...} }]
 */
export function ratioChart(bars, { title }) {
  const labelW = 380;
  const plotW = 460;
  const rowH = 34;
  const top = 70;
  const width = labelW + plotW + 70;
  const height = top + bars.length * rowH + 40;
  const values = bars.flatMap((b) =>
    [b.vsCeiling, b.vsNaive].filter(Boolean).flatMap((r) => [r.min, r.max]),
  );
  const finite = values.filter((v) => Number.isFinite(v) && v > 0);
  const span = Math.min(
    7,
    Math.max(1, Math.ceil(Math.max(...finite.map((v) => Math.abs(Math.log2(v)))))),
  );
  const x0 = labelW + plotW / 2;
  const x = (v) => {
    const l = Math.max(-span, Math.min(span, Math.log2(v)));
    return x0 + (l / span) * (plotW / 2);
  };
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="10" y="20" font-size="14" font-weight="bold">${esc(title)}</text>`,
    `<text x="10" y="38" fill="#555">median ratio hearth/baseline, whisker min–max over rounds, log scale. Dark bar (c): vs ceiling; light bar (n): vs naive.</text>`,
    `<text x="10" y="${top - 12}" fill="#555">Green: hearth at least as good as that baseline (↑ higher is better, ↓ lower is better); red: worse.</text>`,
  ];
  const step = span > 4 ? 2 : 1;
  for (let k = -span; k <= span; k++) {
    if (k % step !== 0) continue;
    const tx = x(2 ** k);
    const label = k >= 0 ? `${2 ** k}×` : `1/${2 ** -k}×`;
    out.push(
      `<line x1="${tx}" y1="${top - 6}" x2="${tx}" y2="${height - 30}" stroke="${k === 0 ? "#333" : "#ddd"}"/>`,
      `<text x="${tx}" y="${height - 14}" text-anchor="middle" fill="#555">${label}</text>`,
    );
  }
  bars.forEach((b, i) => {
    const y = top + i * rowH;
    out.push(
      `<text x="${labelW - 8}" y="${y + 17}" text-anchor="end">${esc(b.label)} ${b.better === "higher" ? "↑" : "↓"}</text>`,
    );
    [
      ["ceiling", b.vsCeiling, 4],
      ["naive", b.vsNaive, 18],
    ].forEach(([name, r, dy]) => {
      if (!r || !Number.isFinite(r.median)) return;
      const good = b.better === "higher" ? r.median >= 1 : r.median <= 1;
      const color = good
        ? name === "ceiling"
          ? "#2e7d32"
          : "#81c784"
        : name === "ceiling"
          ? "#c62828"
          : "#e57373";
      const xm = x(r.median);
      out.push(
        `<rect x="${Math.min(x0, xm)}" y="${y + dy}" width="${Math.max(1, Math.abs(xm - x0))}" height="11" fill="${color}"><title>${esc(`${b.label} vs ${name}: ${fmt(r.median, 2)}× (${fmt(r.min, 2)}–${fmt(r.max, 2)})`)}</title></rect>`,
        `<line x1="${x(r.min)}" y1="${y + dy + 5.5}" x2="${x(r.max)}" y2="${y + dy + 5.5}" stroke="#222"/>`,
        `<text x="${labelW + plotW + 6}" y="${y + dy + 10}" fill="#333">${name[0]} ${fmt(r.median, 2)}×</text>`,
      );
    });
  });
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}
