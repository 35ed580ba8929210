import type { TopLevelSpec } from 'vega-lite';
import type { ChartDatum, ReportChart } from '../document/charts.js';

/** Plot width shared by the per-iteration charts, so they line up one under the other. */
export const CHART_WIDTH = 720;

/**
 * At most this many bars per per-iteration chart. Longer runs are drawn in bins of k consecutive
 * iterations (the mean per iteration of each bin), which keeps the SVG small and readable.
 */
export const MAX_ITERATION_BARS = 300;

/** 20 distinguishable colours (Tableau 20 order, darker tones first), assigned in series order. */
export const PALETTE = [
  '#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac',
  '#a0cbe8', '#ffbe7d', '#ff9d9a', '#86bcb6', '#8cd17d', '#f1ce63', '#d4a6c8', '#fabfd2', '#d7b5a6', '#79706e',
];

const CONFIG = {
  font: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  background: 'white',
  // No per-mark ARIA descriptions: thousands of marks would triple the SVG size.
  aria: false,
  view: { stroke: null },
  axis: { labelFontSize: 11, titleFontSize: 12, grid: true, gridColor: '#e6e6e6' },
  // Same room for y labels in every chart, so the per-iteration charts' plot areas line up.
  axisY: { minExtent: 44 },
  legend: { labelFontSize: 11, titleFontSize: 12, orient: 'right' as const, labelLimit: 260 },
  title: { fontSize: 14, anchor: 'start' as const },
};

const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';

function colorScale(series: readonly string[]) {
  return { domain: [...series], range: series.map((_, i) => PALETTE[i % PALETTE.length]) };
}

/** Per-iteration data, binned: `k` consecutive iteration numbers per bin (k = 1: unchanged). */
export interface BinnedIterations {
  binSize: number;
  /** Data with `iter` = the bin's first iteration and the value field = mean per iteration of the bin. */
  data: ChartDatum[];
  /** The x values in order (every bin, also those without data). */
  xs: number[];
}

/**
 * Bins a per-iteration chart when it has more than `maxBars` iterations. Each bin holds `k`
 * consecutive iteration numbers; a series' value is its sum over the bin divided by the number of
 * iterations in the bin (`perIteration`: ns stay "per iteration", iterations without a datum count
 * as 0) or by its number of data (`mean`: metric values). Without binning the data is returned as
 * is: the same numbers as the tables.
 */
export function binIterations(chart: ReportChart, valueField: string, mode: 'perIteration' | 'mean' = 'perIteration', maxBars = MAX_ITERATION_BARS): BinnedIterations {
  const iters = chart.iterations ?? [...new Set(chart.data.map((d) => Number(d.iter)))].sort((a, b) => a - b);
  if (iters.length <= maxBars) return { binSize: 1, data: chart.data, xs: iters };
  const first = iters[0];
  const k = Math.ceil((iters[iters.length - 1] - first + 1) / maxBars);
  const binOf = (iter: number) => first + Math.floor((iter - first) / k) * k;
  const itersInBin = new Map<number, number>();
  for (const it of iters) itersInBin.set(binOf(it), (itersInBin.get(binOf(it)) ?? 0) + 1);
  const sums = new Map<string, { iter: number; series: string; sum: number; n: number }>();
  for (const d of chart.data) {
    const bin = binOf(Number(d.iter));
    const key = `${bin}\u0000${d.series}`;
    const cur = sums.get(key) ?? { iter: bin, series: String(d.series), sum: 0, n: 0 };
    cur.sum += Number(d[valueField]);
    cur.n++;
    sums.set(key, cur);
  }
  const data = [...sums.values()].map((s) => ({ iter: s.iter, series: s.series, [valueField]: s.sum / (mode === 'mean' ? s.n : itersInBin.get(s.iter)!) }));
  return { binSize: k, data, xs: [...itersInBin.keys()].sort((a, b) => a - b) };
}

/** About this many labelled ticks on an iteration axis, at round steps (1, 2, 5, 10, 20, 50, ...). */
const ITERATION_TICKS = 16;

/** Tick values: the x values at multiples of a round step (in iterations) from the first. */
export function iterationTicks(xs: readonly number[], binSize: number): number[] {
  if (xs.length <= ITERATION_TICKS) return [...xs];
  const span = xs[xs.length - 1] - xs[0];
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  let step = binSize;
  search: for (let m = 1; m < 1e12; m *= 10) {
    for (const f of [1, 2, 5]) {
      // A multiple of the bin size too, so every tick falls on a bin.
      const c = (f * m * binSize) / gcd(f * m, binSize);
      if (span / c <= ITERATION_TICKS) {
        step = c;
        break search;
      }
    }
  }
  return xs.filter((x) => (x - xs[0]) % step === 0);
}

function iterationAxis(binned: BinnedIterations) {
  return {
    field: 'iter',
    type: 'ordinal' as const,
    title: binned.binSize > 1 ? `iteration (bins of ${binned.binSize}; mean per iteration)` : 'iteration',
    scale: { domain: binned.xs },
    axis: { values: iterationTicks(binned.xs, binned.binSize), labelAngle: 0, grid: false },
  };
}

/** Adds each datum's series rank (stack and legend order) without changing its values. */
function ranked(data: ChartDatum[], series: readonly string[]) {
  const rank = new Map(series.map((s, i) => [s, i]));
  return data.map((d) => ({ ...d, rank: rank.get(String(d.series)) ?? series.length }));
}

/** Stacked ns per iteration and series (GPU time by category, idle by cause), plotted in ms. */
function stackedPerIteration(chart: ReportChart, yTitle: string): TopLevelSpec {
  const binned = binIterations(chart, 'ns');
  return {
    $schema: SCHEMA,
    title: chart.title,
    width: CHART_WIDTH,
    height: 240,
    config: CONFIG,
    data: { values: ranked(binned.data, chart.series) },
    transform: [{ calculate: 'datum.ns / 1e6', as: 'ms' }],
    mark: { type: 'bar' },
    encoding: {
      x: iterationAxis(binned),
      y: { field: 'ms', type: 'quantitative', aggregate: 'sum', stack: 'zero', title: yTitle },
      color: { field: 'series', type: 'nominal', title: null, scale: colorScale(chart.series), sort: chart.series },
      order: { field: 'rank', type: 'quantitative', sort: 'ascending' },
    },
  } as TopLevelSpec;
}

/** Lines of metric values (%) per iteration, on the same x as the GPU-time chart above it. */
function metricLines(chart: ReportChart): TopLevelSpec {
  const binned = binIterations(chart, 'value', 'mean');
  return {
    $schema: SCHEMA,
    title: chart.title,
    width: CHART_WIDTH,
    height: 140,
    config: CONFIG,
    data: { values: binned.data },
    mark: { type: 'line', point: binned.xs.length <= 120 },
    encoding: {
      x: iterationAxis(binned),
      y: { field: 'value', type: 'quantitative', title: '% (time-weighted)', scale: { domain: [0, 100] } },
      color: { field: 'series', type: 'nominal', title: null, scale: colorScale(chart.series), sort: chart.series },
    },
  } as TopLevelSpec;
}

/** Horizontal bars of idle ms by cause; devices stack when there are several. */
function idleBars(chart: ReportChart): TopLevelSpec {
  const devices = [...new Set(chart.data.map((d) => String(d.device)))];
  const byDevice = devices.length > 1;
  return {
    $schema: SCHEMA,
    title: chart.title,
    width: CHART_WIDTH - 200,
    height: { step: 22 },
    config: CONFIG,
    data: { values: ranked(chart.data, chart.series) },
    transform: [{ calculate: 'datum.ns / 1e6', as: 'ms' }],
    mark: { type: 'bar' },
    encoding: {
      y: { field: 'series', type: 'nominal', title: null, sort: chart.series, axis: { labelLimit: 260 } },
      x: { field: 'ms', type: 'quantitative', aggregate: 'sum', title: 'idle (ms)' },
      color: byDevice
        ? { field: 'device', type: 'nominal', title: 'device', scale: colorScale(devices) }
        : { field: 'series', type: 'nominal', legend: null, scale: colorScale(chart.series), sort: chart.series },
    },
  } as TopLevelSpec;
}

/**
 * Horizontal bars, one per capture (`engines`), of a value per generated token, stacked by series
 * (kernel categories): each datum `{capture, series, value}`, plotted divided by `divisor`.
 */
function perCaptureBars(chart: ReportChart, xTitle: string, divisor: number): TopLevelSpec {
  const captures = [...new Set(chart.data.map((d) => String(d.capture)))];
  return {
    $schema: SCHEMA,
    title: chart.title,
    width: CHART_WIDTH - 200,
    height: { step: 26 },
    config: CONFIG,
    data: { values: ranked(chart.data, chart.series) },
    transform: [{ calculate: `datum.value / ${divisor}`, as: 'x' }],
    mark: { type: 'bar' },
    encoding: {
      y: { field: 'capture', type: 'nominal', title: null, sort: captures, axis: { labelLimit: 260 } },
      x: { field: 'x', type: 'quantitative', aggregate: 'sum', stack: 'zero', title: xTitle },
      color: chart.series.length > 1 ? { field: 'series', type: 'nominal', title: null, scale: colorScale(chart.series), sort: chart.series } : { value: PALETTE[0] },
      order: { field: 'rank', type: 'quantitative', sort: 'ascending' },
    },
  } as TopLevelSpec;
}

/** The Vega-Lite spec of a report chart. */
export function chartSpec(chart: ReportChart): TopLevelSpec {
  switch (chart.id) {
    case 'gpu-time-by-category':
      return stackedPerIteration(chart, 'GPU time (ms)');
    case 'idle-by-iteration':
      return stackedPerIteration(chart, 'GPU idle (ms)');
    case 'gpu-metrics':
      return metricLines(chart);
    case 'idle-by-cause':
      return idleBars(chart);
    case 'engines-kernel-time-per-token':
      return perCaptureBars(chart, 'kernel time per generated token (us)', 1e3);
    case 'engines-kernels-per-token':
      return perCaptureBars(chart, 'kernels per generated token', 1);
    case 'compare-metric-changes':
      throw new Error('compare-metric-changes is drawn as SVG directly (metricChangesSvg.ts)');
  }
}
