// A small log-log line chart as SVG text: decade grid lines on both axes,
// one polyline per series with a dot and its value at each point. No
// dependency: four line charts do not need a plotting library (and the
// well-kept ones draw through a browser or a canvas package).
import { fmt } from "./stats.mjs";

const esc = (s) =>
  String(s).replace(
    /[&<>"]/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c],
  );

const COLORS = ["#1565c0", "#c62828", "#2e7d32", "#6a1b9a"];

/** Decades 10^a … 10^b covering [lo, hi] (at least one decade). */
function decades(lo, hi) {
  const a = Math.floor(Math.log10(lo));
  const b = Math.max(a + 1, Math.ceil(Math.log10(hi)));
  return [a, b];
}

const tick = (e) => {
  const v = 10 ** e;
  if (v >= 1e6) return `${v / 1e6}M`;
  if (v >= 1e3) return `${v / 1e3}k`;
  return fmt(v);
};

/**
 * series: [{ name, points: [[x, y], ...], dashed? }]; x and y > 0.
 * Returns the SVG document as a string.
 */
export function logLogChart({ title, subtitle, xLabel, yLabel, series, unit = "" }) {
  const W = 640;
  const H = 400;
  const m = { left: 70, right: 150, top: 56, bottom: 50 };
  const pw = W - m.left - m.right;
  const ph = H - m.top - m.bottom;
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = series.flatMap((s) => s.points.map((p) => p[1])).filter((v) => v > 0);
  const [xa, xb] = decades(Math.min(...xs), Math.max(...xs));
  const [ya, yb] = decades(Math.min(...ys), Math.max(...ys));
  const x = (v) => m.left + ((Math.log10(v) - xa) / (xb - xa)) * pw;
  const y = (v) => m.top + ph - ((Math.log10(v) - ya) / (yb - ya)) * ph;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="10" y="20" font-size="14" font-weight="bold">${esc(title)}</text>`,
    subtitle ? `<text x="10" y="38" fill="#555">${esc(subtitle)}</text>` : "",
  ];
  for (let e = xa; e <= xb; e++) {
    out.push(
      `<line x1="${x(10 ** e)}" y1="${m.top}" x2="${x(10 ** e)}" y2="${m.top + ph}" stroke="#ddd"/>`,
      `<text x="${x(10 ** e)}" y="${m.top + ph + 16}" text-anchor="middle" fill="#555">${tick(e)}</text>`,
    );
  }
  for (let e = ya; e <= yb; e++) {
    out.push(
      `<line x1="${m.left}" y1="${y(10 ** e)}" x2="${m.left + pw}" y2="${y(10 ** e)}" stroke="#ddd"/>`,
      `<text x="${m.left - 6}" y="${y(10 ** e) + 4}" text-anchor="end" fill="#555">${tick(e)}</text>`,
    );
  }
  out.push(
    `<rect x="${m.left}" y="${m.top}" width="${pw}" height="${ph}" fill="none" stroke="#999"/>`,
    `<text x="${m.left + pw / 2}" y="${H - 12}" text-anchor="middle">${esc(xLabel)}</text>`,
    `<text transform="translate(16 ${m.top + ph / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>`,
  );
  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const pts = s.points.filter((p) => p[1] > 0);
    const dash = s.dashed ? ' stroke-dasharray="6 4"' : "";
    out.push(
      `<polyline fill="none" stroke="${color}" stroke-width="2"${dash} points="${pts.map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" ")}"/>`,
    );
    for (const [px, py] of pts) {
      out.push(
        `<circle cx="${x(px).toFixed(1)}" cy="${y(py).toFixed(1)}" r="3" fill="${color}"><title>${esc(`${s.name}: ${fmt(py)} ${unit} at ${px.toLocaleString("en-US")}`)}</title></circle>`,
        `<text x="${(x(px) + 5).toFixed(1)}" y="${(y(py) - 6).toFixed(1)}" font-size="10" fill="${color}">${esc(fmt(py))}</text>`,
      );
    }
    const ly = m.top + 14 + i * 18;
    out.push(
      `<line x1="${m.left + pw + 12}" y1="${ly - 4}" x2="${m.left + pw + 36}" y2="${ly - 4}" stroke="${color}" stroke-width="2"${dash}/>`,
      `<text x="${m.left + pw + 40}" y="${ly}">${esc(s.name)}</text>`,
    );
  });
  out.push("</svg>");
  return `${out.filter(Boolean).join("\n")}\n`;
}
