import type { ChartDatum, ReportChart } from '../document/charts.js';
import { escapeHtml } from './htmlTable.js';

/**
 * `compare`'s first chart, written as SVG directly: one row per metric, its change head vs base
 * (head / base - 1) as a dot, its interval as a bar through it, coloured by verdict, over the
 * gate's threshold band. The rows are whatever the comparison has (`compareChangesChart`), so
 * metric rows added to `compare` later appear without more work.
 */

const FONT = 'system-ui, -apple-system, &quot;Segoe UI&quot;, Roboto, sans-serif';
/** Verdict colours (the findings' severities: red, amber, blue, grey); information rows grey and hollow. */
export const VERDICT_COLOURS: Readonly<Record<string, string>> = {
  regressed: '#cf222e',
  inconclusive: '#bf8700',
  improved: '#1a7f37',
  unchanged: '#59636e',
  information: '#8c959f',
};
const LABEL_W = 330;
const PLOT_W = 560;
const ROW_H = 18;
const TOP = 60;
const WIDTH = LABEL_W + PLOT_W + 190;
/** Changes beyond this (either side) are drawn at the edge with an arrow: a 10x change must not squash the rest. */
export const MAX_SHOWN_CHANGE = 1;

const f1 = (x: number) => (Math.round(x * 10) / 10).toString();
const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;

/** The x span in relative change: every shown value and the threshold band, padded, within ±MAX_SHOWN_CHANGE. */
function domainOf(data: readonly ChartDatum[], threshold: number): [number, number] {
  let lo = -threshold;
  let hi = threshold;
  for (const d of data) {
    for (const key of ['relative', 'lo', 'hi']) {
      const v = d[key];
      if (typeof v === 'number') {
        lo = Math.min(lo, v);
        hi = Math.max(hi, v);
      }
    }
  }
  const pad = (hi - lo) * 0.05;
  return [Math.max(-MAX_SHOWN_CHANGE, lo - pad), Math.min(MAX_SHOWN_CHANGE, hi + pad)];
}

/** Round step for about `n` ticks over a span. */
function niceStep(span: number, n: number): number {
  const raw = span / n || 0.01;
  const mag = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((k) => k * mag).find((s) => s >= raw) ?? 10 * mag;
}

function axis(x: (v: number) => number, [lo, hi]: [number, number], plotH: number): string {
  const step = niceStep(hi - lo, 6);
  const out: string[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
    const px = f1(x(v));
    out.push(`<path d="M${px},${TOP}V${TOP + plotH}" stroke="${Math.abs(v) < step * 1e-6 ? '#59636e' : '#e6e6e6'}"/><text x="${px}" y="${TOP - 6}" text-anchor="middle" font-size="11" fill="#59636e">${pct(Math.abs(v) < step * 1e-6 ? 0 : v)}</text>`);
  }
  out.push(`<text x="${f1(LABEL_W + PLOT_W / 2)}" y="${TOP + plotH + 16}" text-anchor="middle" font-size="12" font-weight="bold">change, head vs base (head / base − 1), with its interval (ticks above)</text>`);
  return out.join('');
}

function legend(y: number): string {
  return Object.entries(VERDICT_COLOURS)
    .map(([verdict, colour], i) => {
      const ly = y + i * 16;
      const dot = verdict === 'information' ? `fill="white" stroke="${colour}" stroke-width="1.5"` : `fill="${colour}"`;
      return `<circle cx="${LABEL_W + PLOT_W + 24}" cy="${ly}" r="4.5" ${dot}/><text x="${LABEL_W + PLOT_W + 34}" y="${ly}" dy="0.32em" font-size="11">${verdict === 'information' ? 'not gated (no samples)' : verdict}</text>`;
    })
    .join('');
}

/** A label that fits LABEL_W: long ones keep their start and their end (the unit and scope), the middle elided. */
const shortLabel = (label: string) => (label.length > 46 ? `${label.slice(0, 27)}…${label.slice(-18)}` : label);

/** One metric's row: label, interval bar, dot (arrows where clipped), and its hover text. */
function row(d: ChartDatum, i: number, x: (v: number) => number, [lo, hi]: [number, number]): string {
  const y = TOP + i * ROW_H + ROW_H / 2;
  const verdict = String(d.verdict);
  const colour = VERDICT_COLOURS[verdict] ?? VERDICT_COLOURS.information;
  const clamp = (v: number) => Math.min(hi, Math.max(lo, v));
  const parts = [`<title>${escapeHtml(String(d.tip))}</title>`, `<rect class="hit" x="0" y="${f1(y - ROW_H / 2)}" width="${LABEL_W + PLOT_W}" height="${ROW_H}" fill="transparent"/>`];
  const label = String(d.label);
  parts.push(`<text x="${LABEL_W - 8}" y="${f1(y)}" dy="0.32em" text-anchor="end" font-size="11.5"${d.gated ? ' font-weight="600"' : ''}>${escapeHtml(shortLabel(label))}</text>`);
  if (typeof d.lo === 'number' && typeof d.hi === 'number') {
    parts.push(`<path d="M${f1(x(clamp(d.lo)))},${f1(y)}H${f1(x(clamp(d.hi)))}" stroke="${colour}" stroke-width="3" stroke-linecap="round" opacity="0.55"/>`);
  }
  const r = Number(d.relative);
  const cx = x(clamp(r));
  const dot = verdict === 'information' ? `fill="white" stroke="${colour}" stroke-width="1.5"` : `fill="${colour}"`;
  if (r > hi || r < lo) {
    const dir = r > hi ? 1 : -1;
    parts.push(`<path d="M${f1(cx - dir * 6)},${f1(y - 5)}L${f1(cx)},${f1(y)}L${f1(cx - dir * 6)},${f1(y + 5)}Z" ${dot}/>`);
  } else parts.push(`<circle cx="${f1(cx)}" cy="${f1(y)}" r="4.5" ${dot}/>`);
  return `<g class="metric-row" data-verdict="${escapeHtml(verdict)}">${parts.join('')}</g>`;
}

/**
 * The chart's SVG: data rows `{label, verdict, gated, relative, lo?, hi?, tip}` (relative change
 * and interval as fractions), the threshold band at ±`chart.threshold`.
 */
export function metricChangesSvg(chart: ReportChart): string {
  const threshold = chart.threshold ?? 0;
  const domain = domainOf(chart.data, threshold);
  const x = (v: number) => LABEL_W + ((v - domain[0]) / (domain[1] - domain[0])) * PLOT_W;
  const plotH = Math.max(1, chart.data.length) * ROW_H;
  const height = TOP + plotH + 26;
  const band = `<rect x="${f1(x(Math.max(domain[0], -threshold)))}" y="${TOP}" width="${f1(x(Math.min(domain[1], threshold)) - x(Math.max(domain[0], -threshold)))}" height="${plotH}" fill="#eaeef2"/>`;
  const body = [band, axis(x, domain, plotH), ...chart.data.map((d, i) => row(d, i, x, domain)), legend(TOP + 6)].join('');
  const bandNote = `<text x="8" y="36" font-size="11" fill="#59636e">shaded: within the gate's threshold (±${(threshold * 100).toFixed(1)}%)</text>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" class="marks metric-changes" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="${FONT}"><rect width="${WIDTH}" height="${height}" fill="white"/><text x="8" y="18" font-size="14" font-weight="bold">${escapeHtml(chart.title)}</text>${bandNote}${body}</svg>`;
}
