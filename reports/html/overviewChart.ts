import { overviewTip, type IterationOverview, type OverviewBar } from '../document/overview.js';
import { escapeHtml } from './htmlTable.js';
import { PALETTE } from './chartSpecs.js';

/** Idle causes by kind: warm and grey tones, apart from the categories' palette (GPU time is drawn above the axis, idle below). */
const CAUSE_COLORS: Record<string, string> = {
  gc: '#b2182b',
  gil_wait: '#e08214',
  sync: '#8c510a',
  launch_late: '#762a83',
  unattributed: '#878787',
  fragmented: '#c9c9c9',
};
const NVTX_CAUSE_COLORS = ['#35978f', '#80cdc1', '#01665e', '#c7eae5', '#5ab4ac'];

/** Colour of a GPU series (kernel category, memcpy, memset), by its place in the series order (the charts' palette). */
export function seriesColors(series: readonly string[]): Record<string, string> {
  return Object.fromEntries(series.map((s, i) => [s, PALETTE[i % PALETTE.length]]));
}

/** Colour of an idle cause: fixed per cause kind; NVTX causes in teal tones; anything else grey. */
export function causeColors(causes: readonly string[]): Record<string, string> {
  let nvtx = 0;
  return Object.fromEntries(
    causes.map((c) => {
      if (CAUSE_COLORS[c]) return [c, CAUSE_COLORS[c]];
      if (c.startsWith('nvtx:')) return [c, NVTX_CAUSE_COLORS[nvtx++ % NVTX_CAUSE_COLORS.length]];
      return [c, c.startsWith('(fragmented') ? CAUSE_COLORS.fragmented : CAUSE_COLORS.unattributed];
    }),
  );
}

const W = 1100;
const H = 300;
const PLOT = { left: 64, right: 12, top: 22, bottom: 26 };
/** Share of the plot height above the zero line (GPU time); the rest shows idle time. */
const UP_SHARE = 0.66;

/** Round step for about `n` ticks over [0, max]. */
function tickStep(max: number, n: number): number {
  const raw = max / n;
  const mag = 10 ** Math.floor(Math.log10(raw || 1));
  return [1, 2, 5, 10].map((f) => f * mag).find((s) => s >= raw) ?? 10 * mag;
}

const fmtMs = (ns: number) => `${Number((ns / 1e6).toFixed(3))}`;

/** The y axis: ms above the zero line (GPU time) and below it (idle), with light grid lines. */
function yAxis(maxUp: number, maxDown: number, zeroY: number, upPx: number, downPx: number): string {
  const out: string[] = [];
  // Each side has its own scale (idle can dwarf GPU time in a stalled iteration), so its own ticks.
  const step = tickStep(maxUp, 4);
  const downStep = tickStep(maxDown, 2);
  for (let v = step; v <= maxUp; v += step) out.push(`<line class="grid" x1="${PLOT.left}" x2="${W - PLOT.right}" y1="${(zeroY - (v / maxUp) * upPx).toFixed(1)}" y2="${(zeroY - (v / maxUp) * upPx).toFixed(1)}"/><text class="tick" x="${PLOT.left - 6}" y="${(zeroY - (v / maxUp) * upPx + 4).toFixed(1)}" text-anchor="end">${fmtMs(v)}</text>`);
  for (let v = downStep; maxDown > 0 && v <= maxDown; v += downStep) out.push(`<text class="tick" x="${PLOT.left - 6}" y="${(zeroY + (v / maxDown) * downPx + 4).toFixed(1)}" text-anchor="end">${fmtMs(v)}</text>`);
  out.push(`<line class="zero" x1="${PLOT.left}" x2="${W - PLOT.right}" y1="${zeroY}" y2="${zeroY}"/>`);
  out.push(`<text class="axis-title" x="14" y="${zeroY - upPx / 2}" transform="rotate(-90 14 ${zeroY - upPx / 2})" text-anchor="middle">GPU time (ms)</text>`);
  if (maxDown > 0) out.push(`<text class="axis-title" x="14" y="${zeroY + downPx / 2}" transform="rotate(-90 14 ${zeroY + downPx / 2})" text-anchor="middle">idle (ms)</text>`);
  return out.join('\n');
}

/** One bar's group: GPU series stacked up from the zero line, idle causes stacked down, the marks above. */
function barGroup(b: OverviewBar, i: number, o: { x: number; bw: number; zeroY: number; upScale: number; downScale: number; gpuColors: string[]; idleColors: string[]; timeline: ReadonlySet<number> }): string {
  const rects: string[] = [];
  let y = o.zeroY;
  b.gpuNs.forEach((ns, s) => {
    if (ns <= 0) return;
    const h = ns * o.upScale;
    y -= h;
    rects.push(`<rect x="${o.x.toFixed(1)}" y="${y.toFixed(1)}" width="${o.bw.toFixed(1)}" height="${h.toFixed(1)}" fill="${o.gpuColors[s]}"/>`);
  });
  const top = y;
  y = o.zeroY;
  b.idleNs.forEach((ns, s) => {
    if (ns <= 0) return;
    const h = ns * o.downScale;
    rects.push(`<rect x="${o.x.toFixed(1)}" y="${y.toFixed(1)}" width="${o.bw.toFixed(1)}" height="${h.toFixed(1)}" fill="${o.idleColors[s]}"/>`);
    y += h;
  });
  const cx = (o.x + o.bw / 2).toFixed(1);
  if (b.slow) rects.push(`<path class="mark-slow" d="M${cx} ${(top - 3).toFixed(1)} l-4 -7 h8 z"/>`);
  if (b.cited.length) rects.push(`<circle class="mark-cited" cx="${cx}" cy="${(top - (b.slow ? 14 : 6)).toFixed(1)}" r="3"/>`);
  // A transparent hit area over the whole column, so thin bars are easy to hover.
  rects.push(`<rect class="hit" x="${o.x.toFixed(1)}" y="${PLOT.top}" width="${o.bw.toFixed(1)}" height="${H - PLOT.top - PLOT.bottom}"/>`);
  const step = b.iterations === 1 && o.timeline.has(b.iter) ? ` data-open-step="${b.iter}"` : '';
  return `<g class="it" data-i="${i}" data-iter="${b.iter}"${step} data-tip="${escapeHtml(overviewTip(b))}">${rects.join('')}</g>`;
}

/** x-axis labels: about 16 iteration numbers at round steps. */
function xLabels(bars: readonly OverviewBar[], xOf: (i: number) => number, bw: number): string {
  const every = Math.max(1, Math.ceil(bars.length / 16));
  return bars
    .map((b, i) => (i % every === 0 ? `<text class="tick" x="${(xOf(i) + bw / 2).toFixed(1)}" y="${H - PLOT.bottom + 14}" text-anchor="middle">${b.iter}</text>` : ''))
    .join('');
}

function legend(colors: Record<string, string>, title: string): string {
  const items = Object.entries(colors).map(([s, c]) => `<span class="key"><i style="background:${c}"></i>${escapeHtml(s)}</span>`);
  return items.length ? `<div class="legend"><b>${escapeHtml(title)}</b> ${items.join(' ')}</div>` : '';
}

/**
 * The iterations chart as inline SVG: one column per iteration (or bin), GPU time stacked by
 * series above the zero line, idle time stacked by cause below it, slow iterations marked with a
 * red triangle and those the findings cite with a dot. Each column carries its hover text
 * (`data-tip`: the iteration's batch among it); the page script shows it.
 */
export function overviewChartHtml(o: IterationOverview, timelineIters: ReadonlySet<number>): string {
  const n = o.bars.length;
  const plotW = W - PLOT.left - PLOT.right;
  const upPx = (H - PLOT.top - PLOT.bottom) * UP_SHARE;
  const downPx = H - PLOT.top - PLOT.bottom - upPx;
  const zeroY = PLOT.top + upPx;
  const maxUp = Math.max(1, ...o.bars.map((b) => b.gpuNs.reduce((a, x) => a + x, 0)));
  const maxDown = Math.max(0, ...o.bars.map((b) => b.idleNs.reduce((a, x) => a + x, 0)));
  const slot = plotW / Math.max(1, n);
  const bw = Math.max(1, slot * 0.8);
  const xOf = (i: number) => PLOT.left + i * slot + (slot - bw) / 2;
  const gpuColors = seriesColors(o.gpuSeries);
  const idleColors = causeColors(o.idleSeries);
  const opts = { bw, zeroY, upScale: upPx / maxUp, downScale: maxDown > 0 ? downPx / maxDown : 0, gpuColors: o.gpuSeries.map((s) => gpuColors[s]), idleColors: o.idleSeries.map((s) => idleColors[s]), timeline: timelineIters };
  const bars = o.bars.map((b, i) => barGroup(b, i, { ...opts, x: xOf(i) })).join('\n');
  const xTitle = o.binSize > 1 ? `iteration (bins of ${o.binSize}; mean per iteration)` : 'iteration';
  return `<figure class="overview" id="overview-chart" data-bars="${n}">
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="GPU time and idle time per iteration">
${yAxis(maxUp, maxDown, zeroY, upPx, downPx)}
${bars}
${xLabels(o.bars, xOf, bw)}
<text class="axis-title" x="${PLOT.left + plotW / 2}" y="${H - 2}" text-anchor="middle">${escapeHtml(xTitle)}</text>
</svg>
<div class="overview-tip" id="overview-tip" hidden></div>
${legend(gpuColors, 'GPU time (up):')}
${legend(idleColors, 'Idle by cause (down):')}
<figcaption>Every iteration in time order: kernel time by category plus memcpy/memset above the line, GPU idle time by host cause below it (the iterations and idle tables' numbers). <span class="mark-slow-key">▼</span> slow (the 5% slowest wall times), <span class="mark-cited-key">●</span> cited by a finding. Hover a column for its batch; click one with a timeline to open it.</figcaption>
</figure>`;
}
