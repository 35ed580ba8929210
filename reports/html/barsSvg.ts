import type { ReportChart } from '../document/charts.js';
import { escapeHtml } from './htmlTable.js';
import { binIterations, CHART_WIDTH, iterationTicks, PALETTE } from './chartSpecs.js';

/**
 * The bar charts written as SVG directly: a long run's per-iteration charts are a few thousand
 * bars, which Vega's dataflow took seconds to lay out (issue 57: `report --format html` within
 * 1.1x of `--format md`). Same data, binning, ticks, colours and stacking order as their Vega-Lite
 * specs (chartSpecs.ts): series stacked in legend order from the axis, the palette by series.
 */

const FONT = 'system-ui, -apple-system, &quot;Segoe UI&quot;, Roboto, sans-serif';
const LEFT = 56;
const TOP = 30;
const LEGEND_W = 280;

const f1 = (x: number) => (Math.round(x * 10) / 10).toString();

/** Round step for about `n` ticks over [0, max]. */
function niceStep(max: number, n: number): number {
  const raw = max / n || 1;
  const mag = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((k) => k * mag).find((s) => s >= raw) ?? 10 * mag;
}

const tickText = (v: number) => String(Number(v.toPrecision(6)));

/** Grid lines, tick marks and axis lines as paths, as Vega draws them. */
const hLine = (x1: number, x2: number, y: number | string, stroke: string) => `<path d="M${f1(x1)},${y}H${f1(x2)}" stroke="${stroke}"/>`;
const vLine = (x: number | string, y1: number, y2: number, stroke: string) => `<path d="M${x},${f1(y1)}V${f1(y2)}" stroke="${stroke}"/>`;

/** Value axis along y (vertical bars) with grid lines, labels and title. */
function yAxis(max: number, plotH: number, plotW: number, title: string): string {
  const step = niceStep(max, 5);
  const out: string[] = [];
  for (let v = 0; v <= max + step * 1e-9; v += step) {
    const y = f1(TOP + plotH - (v / max) * plotH);
    out.push(`${hLine(LEFT, LEFT + plotW, y, '#e6e6e6')}${hLine(LEFT - 5, LEFT, y, '#888')}<text x="${LEFT - 7}" y="${y}" dy="0.32em" text-anchor="end" font-size="11">${tickText(v)}</text>`);
  }
  const mid = f1(TOP + plotH / 2);
  out.push(`<text x="14" y="${mid}" transform="rotate(-90 14 ${mid})" text-anchor="middle" font-size="12" font-weight="bold">${escapeHtml(title)}</text>`);
  return out.join('');
}

function legendSvg(series: readonly string[], x: number, y: number): string {
  return series
    .map((s, i) => `<rect x="${x}" y="${y + i * 16}" width="10" height="10" fill="${PALETTE[i % PALETTE.length]}"/><text x="${x + 16}" y="${y + i * 16 + 5}" dy="0.32em" font-size="11">${escapeHtml(s.length > 44 ? `${s.slice(0, 43)}…` : s)}</text>`)
    .join('');
}

function frame(width: number, height: number, title: string, body: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" class="marks" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="${FONT}"><rect width="${width}" height="${height}" fill="white"/><text x="${LEFT}" y="18" font-size="14" font-weight="bold">${escapeHtml(title)}</text>${body}</svg>`;
}

/** Stacked ns per iteration and series, plotted in ms (the `stackedPerIteration` spec's chart). */
export function stackedIterationBarsSvg(chart: ReportChart, yTitle: string): string {
  const binned = binIterations(chart, 'ns');
  const plotW = CHART_WIDTH;
  const plotH = 240;
  const rank = new Map(chart.series.map((s, i) => [s, i]));
  const slot = new Map(binned.xs.map((x, i) => [x, i]));
  // ms per (bar, series), then stacked in series order.
  const cells: number[][] = binned.xs.map(() => new Array<number>(chart.series.length).fill(0));
  for (const d of binned.data) {
    const i = slot.get(Number(d.iter));
    const s = rank.get(String(d.series));
    if (i !== undefined && s !== undefined) cells[i][s] += Number(d.ns) / 1e6;
  }
  const max = Math.max(1e-9, ...cells.map((c) => c.reduce((a, x) => a + x, 0)));
  const step = niceStep(max, 5);
  const top = Math.ceil(max / step) * step;
  const band = plotW / Math.max(1, binned.xs.length);
  const bw = Math.max(0.5, band * 0.9);
  const bars: string[] = [];
  cells.forEach((c, i) => {
    let y = TOP + plotH;
    const x = f1(LEFT + i * band + (band - bw) / 2);
    c.forEach((ms, s) => {
      if (ms <= 0) return;
      const h = (ms / top) * plotH;
      y -= h;
      bars.push(`<path d="M${x},${f1(y)}h${f1(bw)}v${f1(h)}h${f1(-bw)}Z" fill="${PALETTE[s % PALETTE.length]}"/>`);
    });
  });
  const ticks = iterationTicks(binned.xs, binned.binSize)
    .map((x) => {
      const cx = f1(LEFT + slot.get(x)! * band + band / 2);
      return `${vLine(cx, TOP + plotH, TOP + plotH + 5, '#888')}<text x="${cx}" y="${TOP + plotH + 16}" text-anchor="middle" font-size="11">${x}</text>`;
    })
    .join('');
  const xTitle = binned.binSize > 1 ? `iteration (bins of ${binned.binSize}; mean per iteration)` : 'iteration';
  const body = `${yAxis(top, plotH, plotW, yTitle)}${bars.join('')}${hLine(LEFT, LEFT + plotW, TOP + plotH, '#888')}${vLine(LEFT, TOP, TOP + plotH, '#888')}${ticks}<text x="${LEFT + plotW / 2}" y="${TOP + plotH + 32}" text-anchor="middle" font-size="12" font-weight="bold">${escapeHtml(xTitle)}</text>${legendSvg(chart.series, LEFT + plotW + 20, TOP)}`;
  return frame(LEFT + plotW + LEGEND_W, TOP + plotH + 44, chart.title, body);
}

/** Horizontal bars of idle ms by cause, one colour per series (the `idleBars` spec's chart, one device). */
export function causeBarsSvg(chart: ReportChart): string {
  const left = 280;
  const plotW = CHART_WIDTH - 200;
  const ms = chart.series.map((s) => chart.data.filter((d) => d.series === s).reduce((a, d) => a + Number(d.ns), 0) / 1e6);
  const max = Math.max(1e-9, ...ms);
  const step = niceStep(max, 5);
  const top = Math.ceil(max / step) * step;
  const rowH = 22;
  const plotH = rowH * chart.series.length;
  const out: string[] = [];
  for (let v = 0; v <= top + step * 1e-9; v += step) {
    const x = f1(left + (v / top) * plotW);
    out.push(`${vLine(x, TOP, TOP + plotH, '#e6e6e6')}${vLine(x, TOP + plotH, TOP + plotH + 5, '#888')}<text x="${x}" y="${TOP + plotH + 16}" text-anchor="middle" font-size="11">${tickText(v)}</text>`);
  }
  chart.series.forEach((s, i) => {
    const y = TOP + i * rowH;
    const label = s.length > 44 ? `${s.slice(0, 43)}…` : s;
    out.push(`${hLine(left - 5, left, y + rowH / 2, '#888')}<text x="${left - 7}" y="${y + rowH / 2}" dy="0.32em" text-anchor="end" font-size="11">${escapeHtml(label)}</text>`);
    if (ms[i] > 0) out.push(`<path d="M${left},${y + 2}h${f1((ms[i] / top) * plotW)}v${rowH - 4}h${f1(-(ms[i] / top) * plotW)}Z" fill="${PALETTE[i % PALETTE.length]}"/>`);
  });
  out.push(`${vLine(left, TOP, TOP + plotH, '#888')}${hLine(left, left + plotW, TOP + plotH, '#888')}<text x="${left + plotW / 2}" y="${TOP + plotH + 34}" text-anchor="middle" font-size="12" font-weight="bold">idle (ms)</text>`);
  return frame(left + plotW + 20, TOP + plotH + 44, chart.title, out.join(''));
}
