import type { LoadedExport } from '../load/loadedExport.js';
import { unionIntervals } from '../math/intervals.js';
import { chooseMetricGpu, readMetricCatalog, type MetricCatalog, type MetricDef, type MetricGpu } from './catalog.js';
import { scanSegments, type ScanStats, type SegmentSink } from '../load/metricScan.js';
import { seriesFor, type TimeInterval } from './timeWeighted.js';

/**
 * Each metric's distribution over a time window (the capture, a span, or the union of iteration
 * windows): time-weighted mean, p50, p90, min, max.
 *
 * Percentiles are TIME-WEIGHTED: pXX is the smallest value v such that the metric was <= v for at
 * least XX% of the covered time (each sample weighted by how long it held inside the window). With
 * nsys's fixed-rate sampling this is close to the sample percentile, but it stays consistent with the
 * time-weighted mean when samples are dropped or the window clips a hold. Max/min are over the
 * samples that held for some time inside the window (including the one holding at its start).
 */

export interface MetricStats {
  gpuId: number;
  gpuName: string | null;
  /** nsys name, e.g. `SMs Active [Throughput %]`. */
  metric: string;
  /** Bracketed unit of the name (`Throughput %`, `MHz`, ...). */
  unit: string | null;
  mean: number | null;
  p50: number | null;
  p90: number | null;
  min: number | null;
  max: number | null;
  /** Samples that held for some time inside the window. */
  samples: number;
  /** Window time during which a sample of this metric held. */
  coveredNs: number;
  /** Values were stored in Hz under a `[MHz]` name and are reported in MHz. */
  convertedFromHz: boolean;
}

export interface MetricsSummary {
  file: string;
  available: boolean;
  /** What the statistics cover. */
  scope: { kind: 'capture' | 'span' | 'intervals'; startNs: number | null; endNs: number | null; intervals: number; windowNs: number | null };
  gpus: MetricGpu[];
  samplingHz: number | null;
  metrics: MetricStats[];
  notes: string[];
  scan: ScanStats | null;
}

export interface MetricsStatsOptions {
  /** One GPU (default: every sampled GPU). */
  gpu?: number;
  /** Metric names (default: all). */
  metrics?: readonly string[];
  catalog?: MetricCatalog;
}

/** Time-weighted histogram (raw value -> ns) and moments of each series inside a disjoint, sorted window set. */
class WindowDistribution implements SegmentSink {
  readonly hist: Map<number, number>[];
  readonly covered: Float64Array;
  readonly sum: Float64Array;
  readonly min: Float64Array;
  readonly max: Float64Array;
  readonly held: Float64Array;
  private readonly cursor: Int32Array;
  constructor(
    private readonly starts: Float64Array,
    private readonly ends: Float64Array,
    ns: number,
  ) {
    this.hist = Array.from({ length: ns }, () => new Map<number, number>());
    this.covered = new Float64Array(ns);
    this.sum = new Float64Array(ns);
    this.min = new Float64Array(ns).fill(Infinity);
    this.max = new Float64Array(ns).fill(-Infinity);
    this.held = new Float64Array(ns);
    this.cursor = new Int32Array(ns);
  }
  segment(s: number, a: number, b: number, v: number): void {
    const n = this.starts.length;
    const starts = this.starts;
    const ends = this.ends;
    let k = this.cursor[s];
    while (k < n && ends[k] <= a) k++;
    this.cursor[s] = k;
    let d = 0;
    for (let j = k; j < n; j++) {
      const sj = starts[j];
      if (sj >= b) break;
      const ej = ends[j];
      d += (ej < b ? ej : b) - (sj > a ? sj : a);
    }
    if (d <= 0) return;
    const h = this.hist[s];
    h.set(v, (h.get(v) ?? 0) + d);
    this.covered[s] += d;
    this.sum[s] += v * d;
    if (v < this.min[s]) this.min[s] = v;
    if (v > this.max[s]) this.max[s] = v;
    this.held[s]++;
  }
}

/** Time-weighted percentile (p in 0..100) of a value -> weight histogram: smallest v with cumulative weight >= p% of the total. */
export function weightedPercentile(hist: Map<number, number>, p: number): number | null {
  if (hist.size === 0) return null;
  const values = [...hist.keys()].sort((x, y) => x - y);
  let total = 0;
  for (const v of values) total += hist.get(v)!;
  if (!(total > 0)) return null;
  const target = (p / 100) * total;
  let cum = 0;
  for (const v of values) {
    cum += hist.get(v)!;
    if (cum >= target * (1 - 1e-12)) return v;
  }
  return values[values.length - 1];
}

function noMetricsSummary(loaded: LoadedExport, catalog: MetricCatalog, scope: MetricsSummary['scope']): MetricsSummary {
  return { file: loaded.path, available: false, scope, gpus: [], samplingHz: null, metrics: [], notes: [catalog.reason ?? 'no GPU metrics in this export'], scan: null };
}

function summarize(loaded: LoadedExport, windows: { starts: Float64Array; ends: Float64Array }, scope: MetricsSummary['scope'], opts: MetricsStatsOptions): MetricsSummary {
  const catalog = opts.catalog ?? readMetricCatalog(loaded);
  if (!catalog.available) return noMetricsSummary(loaded, catalog, scope);
  const gpuIds = opts.gpu !== undefined ? [chooseMetricGpu(catalog, opts.gpu)] : catalog.gpus.map((g) => g.gpuId);
  const series: MetricDef[] = [];
  const notes: string[] = [];
  for (const g of gpuIds) {
    const r = seriesFor(catalog, g, opts.metrics);
    series.push(...r.series);
    if (r.missing.length) notes.push(`GPU ${g}: no metric named ${r.missing.map((m) => `'${m}'`).join(', ')}`);
  }
  const n = windows.starts.length;
  // An empty window reads nothing (scanSegments with no series runs no query).
  const scanSeries = n === 0 ? [] : series;
  const scanWindow = scope.kind === 'capture' || n === 0 ? null : { lo: windows.starts[0], hi: windows.ends[n - 1] };
  const scanned = scanSegments(loaded, scanSeries, scanWindow, () => new WindowDistribution(windows.starts, windows.ends, series.length), { samplingHz: catalog.samplingHz });
  const { sink, stats } = scanned;
  const scale = n === 0 ? new Float64Array(series.length).fill(1) : scanned.scale;
  const gpuName = new Map(catalog.gpus.map((g) => [g.gpuId, g.name]));
  const metrics: MetricStats[] = series.map((d, s) => {
    const k = scale[s];
    const covered = sink.covered[s];
    const p = (q: number) => {
      const v = weightedPercentile(sink.hist[s], q);
      return v == null ? null : v * k;
    };
    return {
      gpuId: d.gpuId,
      gpuName: gpuName.get(d.gpuId) ?? null,
      metric: d.name,
      unit: d.unit,
      mean: covered > 0 ? (sink.sum[s] / covered) * k : null,
      p50: p(50),
      p90: p(90),
      min: covered > 0 ? sink.min[s] * k : null,
      max: covered > 0 ? sink.max[s] * k : null,
      samples: sink.held[s],
      coveredNs: covered,
      convertedFromHz: k !== 1,
    };
  });
  const converted = metrics.filter((m) => m.convertedFromHz).map((m) => m.metric);
  if (converted.length) notes.push(`${[...new Set(converted)].join(', ')}: stored in Hz, reported in MHz`);
  if (stats.restarts.length) notes.push(`GPU metrics read in ${stats.passes} passes (${stats.restarts.join('; ')})`);
  const uncovered = metrics.filter((m) => m.coveredNs === 0).length;
  if (uncovered) notes.push(`${uncovered} metric(s) have no sample inside the window`);
  return { file: loaded.path, available: true, scope, gpus: catalog.gpus.filter((g) => gpuIds.includes(g.gpuId)), samplingHz: catalog.samplingHz, metrics, notes, scan: stats };
}

/**
 * Every metric's time-weighted mean, p50, p90, min, max over the capture (no bounds: from each
 * series' first sample to its last) or over [startNs, endNs).
 */
export function metricsOverCapture(loaded: LoadedExport, opts: MetricsStatsOptions & { startNs?: number; endNs?: number } = {}): MetricsSummary {
  const bounded = opts.startNs !== undefined || opts.endNs !== undefined;
  const lo = opts.startNs ?? -Infinity;
  const hi = opts.endNs ?? Infinity;
  const scope: MetricsSummary['scope'] = bounded
    ? { kind: 'span', startNs: opts.startNs ?? null, endNs: opts.endNs ?? null, intervals: 1, windowNs: Number.isFinite(hi - lo) ? Math.max(0, hi - lo) : null }
    : { kind: 'capture', startNs: null, endNs: null, intervals: 1, windowNs: null };
  const windows = hi > lo ? { starts: Float64Array.of(lo), ends: Float64Array.of(hi) } : { starts: new Float64Array(0), ends: new Float64Array(0) };
  // A half-open span (only a start or only an end) reads the table unfiltered (scan.ts filters finite windows only).
  return summarize(loaded, windows, scope, opts);
}

/** The same statistics over the union of intervals (e.g. the windows of iterations A..B). */
export function metricsOverIntervals(loaded: LoadedExport, intervals: readonly TimeInterval[], opts: MetricsStatsOptions = {}): MetricsSummary {
  const u = unionIntervals(
    intervals.map((i) => i.startNs),
    intervals.map((i) => i.endNs),
  );
  let windowNs = 0;
  for (let i = 0; i < u.starts.length; i++) windowNs += u.ends[i] - u.starts[i];
  const scope: MetricsSummary['scope'] = {
    kind: 'intervals',
    startNs: u.starts.length ? u.starts[0] : null,
    endNs: u.ends.length ? u.ends[u.ends.length - 1] : null,
    intervals: intervals.length,
    windowNs,
  };
  return summarize(loaded, u, scope, opts);
}
