import { html, raw, type Html } from "./html";

export interface Series<T> {
  label: string;
  /** A legend class of console.css (s-ok, s-bad, s-p50, …) and the SVG fill or stroke beside it. */
  className: string;
  color: string;
  value: (bucket: T) => number | null;
}

const W = 640;
const H = 150;
const LEFT = 4;
const BOTTOM = 4;
const TOP = 8;

const axisLabel = (at: string) => at.slice(11, 16);

/**
 * A chart drawn on the server as SVG (no script, no inline style): stacked bars per bucket, or lines. It has a title
 * and a description a screen reader reads (the totals and the extremes), and a legend beside it.
 */
export function chart<T extends { at: string }>(
  id: string,
  title: string,
  buckets: T[],
  series: Series<T>[],
  kind: "bars" | "lines",
  unit: string,
): Html {
  const values = buckets.map((b) => series.map((s) => s.value(b) ?? 0));
  const max = Math.max(1, ...values.map((v) => (kind === "bars" ? v.reduce((a, b) => a + b, 0) : Math.max(...v))));
  const plotW = W - LEFT - 8;
  const plotH = H - TOP - BOTTOM;
  const step = plotW / Math.max(1, buckets.length);
  const y = (v: number) => TOP + plotH - (v / max) * plotH;
  let marks = "";
  if (kind === "bars") {
    buckets.forEach((_b, i) => {
      let base = 0;
      series.forEach((s, j) => {
        const v = values[i][j];
        if (!v) return;
        marks += `<rect x="${(LEFT + i * step + 0.5).toFixed(1)}" y="${y(base + v).toFixed(1)}" width="${Math.max(1, step - 1).toFixed(1)}" height="${(y(base) - y(base + v)).toFixed(1)}" fill="${s.color}"></rect>`;
        base += v;
      });
    });
  } else {
    for (const s of series) {
      const points = buckets.flatMap((b, i) => {
        const v = s.value(b);
        return v === null ? [] : [`${(LEFT + i * step + step / 2).toFixed(1)},${y(v).toFixed(1)}`];
      });
      if (points.length > 1)
        marks += `<polyline fill="none" stroke="${s.color}" stroke-width="2" points="${points.join(" ")}"></polyline>`;
      for (const point of points) {
        const [cx, cy] = point.split(",");
        marks += `<circle cx="${cx}" cy="${cy}" r="3" fill="${s.color}"></circle>`;
      }
    }
  }
  const totals = series.map((s) => {
    const all = buckets.map(s.value).filter((v): v is number => v !== null);
    return kind === "bars"
      ? `${s.label}: ${all.reduce((a, b) => a + b, 0)}`
      : `${s.label}: ${all.length ? `up to ${Math.max(...all)} ${unit}` : "none"}`;
  });
  const first = buckets[0]?.at ?? "";
  const last = buckets[buckets.length - 1]?.at ?? "";
  const description = `${title}, ${first && axisLabel(first)} to ${last && axisLabel(last)} UTC. ${totals.join("; ")}.`;
  // The axis' words are HTML beside the drawing, not SVG text: they keep the page's font size however narrow the chart.
  const axis = `<line x1="${LEFT}" y1="${TOP + plotH}" x2="${W - 8}" y2="${TOP + plotH}" stroke="#4a5468"></line>`;
  return html`<figure>
<figcaption id="${id}-caption">${title} <span class="muted">(${unit})</span></figcaption>
<div class="chart-frame"><span class="y-max" aria-hidden="true">${max} ${unit}</span>
<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="${id}-title ${id}-desc"><title id="${id}-title">${title}</title><desc id="${id}-desc">${description}</desc>${raw(axis + marks)}</svg>
<div class="x-axis" aria-hidden="true"><span>${first && axisLabel(first)} UTC</span><span>${last && axisLabel(last)} UTC</span></div></div>
<div class="legend">${series.map((s) => html`<span class="${s.className}">${s.label}</span>`)}</div>
</figure>`;
}
