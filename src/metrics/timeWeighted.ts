import type { LoadedExport } from '../load/loadedExport.js';
import { chooseMetricGpu, metricsOfGpu, readMetricCatalog, resolveMetrics, type MetricCatalog, type MetricDef } from './catalog.js';
import { scanSegments, type ScanStats, type SegmentSink } from '../load/metricScan.js';

/**
 * Time-weighted means of GPU metrics over many intervals at once, in one streaming pass.
 *
 * Mean of a metric over an interval = sum(value x held time inside the interval) / (time inside the
 * interval during which some sample holds). A sample holds until the next sample of the same metric
 * and GPU (see scan.ts); the sample holding at the interval start counts from the start. Parts of an
 * interval before a series' first sample or after its last are not covered; an interval with no
 * covered time gets null.
 */

export interface TimeInterval {
  startNs: number;
  endNs: number;
}

export interface TimeWeightedOptions {
  /** GPU id (`TARGET_INFO_GPU.id`); default: the lowest sampled GPU. */
  gpu?: number;
  /** Metric names (full or base, see `resolveMetrics`); default: every metric of the GPU. */
  metrics?: readonly string[];
  /** A catalog already read for this handle (saves its small queries). */
  catalog?: MetricCatalog;
}

/**
 * Per interval and series: `sums[i * nSeries + s]` (value x ns, already scaled, e.g. Hz to MHz) and
 * `coveredNs[i * nSeries + s]`. Exact to aggregate: the mean over a set of intervals is
 * sum(sums) / sum(coveredNs).
 */
export interface IntervalSums {
  series: MetricDef[];
  sums: Float64Array;
  coveredNs: Float64Array;
  /** Per series: 1e-6 when a `[MHz]` clock was stored in Hz (applied to `sums` already). */
  scale: Float64Array;
  stats: ScanStats;
}

/**
 * Accumulates holds into intervals sorted by start. Each series keeps a cursor past the intervals
 * that end (with all earlier ones) before its current hold, so the work is O(samples + intervals)
 * per series when intervals overlap at most at their boundaries (any overlap stays correct).
 */
class IntervalAccumulator implements SegmentSink {
  readonly sums: Float64Array;
  readonly covered: Float64Array;
  private readonly cursor: Int32Array;
  constructor(
    private readonly starts: Float64Array,
    private readonly ends: Float64Array,
    /** Running max of `ends` in start order. */
    private readonly maxEnd: Float64Array,
    private readonly ns: number,
  ) {
    const n = starts.length;
    this.sums = new Float64Array(n * ns);
    this.covered = new Float64Array(n * ns);
    this.cursor = new Int32Array(ns);
  }
  segment(s: number, a: number, b: number, v: number): void {
    const n = this.starts.length;
    const maxEnd = this.maxEnd;
    let k = this.cursor[s];
    while (k < n && maxEnd[k] <= a) k++;
    this.cursor[s] = k;
    const starts = this.starts;
    const ends = this.ends;
    const ns = this.ns;
    for (let j = k; j < n; j++) {
      const sj = starts[j];
      if (sj >= b) break;
      const ej = ends[j];
      if (ej <= a) continue;
      const d = (ej < b ? ej : b) - (sj > a ? sj : a);
      const idx = j * ns + s;
      this.sums[idx] += v * d;
      this.covered[idx] += d;
    }
  }
}

/** One pass accumulating every interval for every series given (any GPUs). Intervals keep their input order in the result. */
export function accumulateIntervals(loaded: LoadedExport, catalog: MetricCatalog, series: MetricDef[], intervals: readonly TimeInterval[]): IntervalSums {
  const n = intervals.length;
  const ns = series.length;
  const order = Array.from({ length: n }, (_, i) => i).filter((i) => intervals[i].endNs > intervals[i].startNs);
  order.sort((x, y) => intervals[x].startNs - intervals[y].startNs || intervals[x].endNs - intervals[y].endNs);
  const m = order.length;
  const starts = new Float64Array(m);
  const ends = new Float64Array(m);
  const maxEnd = new Float64Array(m);
  let run = -Infinity;
  for (let j = 0; j < m; j++) {
    starts[j] = intervals[order[j]].startNs;
    ends[j] = intervals[order[j]].endNs;
    run = Math.max(run, ends[j]);
    maxEnd[j] = run;
  }
  const sums = new Float64Array(n * ns);
  const coveredNs = new Float64Array(n * ns);
  if (m === 0 || ns === 0) {
    return { series, sums, coveredNs, scale: new Float64Array(ns).fill(1), stats: { passes: 0, restarts: [], timeFiltered: false, orderedBySql: false, rows: 0, ms: 0 } };
  }
  const { sink, scale, stats } = scanSegments(loaded, series, { lo: starts[0], hi: run }, () => new IntervalAccumulator(starts, ends, maxEnd, ns), { samplingHz: catalog.samplingHz });
  // Back to input order, scaled.
  for (let j = 0; j < m; j++) {
    const i = order[j];
    for (let s = 0; s < ns; s++) {
      sums[i * ns + s] = sink.sums[j * ns + s] * scale[s];
      coveredNs[i * ns + s] = sink.covered[j * ns + s];
    }
  }
  return { series, sums, coveredNs, scale, stats };
}

/** Series to read on one GPU: the metrics named (all of the GPU's when none). */
export function seriesFor(catalog: MetricCatalog, gpuId: number, metrics?: readonly string[]): { series: MetricDef[]; missing: string[] } {
  if (!metrics) return { series: metricsOfGpu(catalog, gpuId), missing: [] };
  const r = resolveMetrics(catalog, gpuId, metrics);
  return { series: r.found, missing: r.missing };
}

/**
 * Sums and covered time of the chosen metrics of one GPU inside each interval (input order).
 * Null when the export has no GPU metrics.
 */
export function timeWeightedSums(loaded: LoadedExport, intervals: readonly TimeInterval[], opts: TimeWeightedOptions = {}): (IntervalSums & { gpuId: number; missing: string[] }) | null {
  const catalog = opts.catalog ?? readMetricCatalog(loaded);
  if (!catalog.available) return null;
  const gpuId = chooseMetricGpu(catalog, opts.gpu);
  const { series, missing } = seriesFor(catalog, gpuId, opts.metrics);
  return { ...accumulateIntervals(loaded, catalog, series, intervals), gpuId, missing };
}

/** `sum / covered`, or null when nothing was covered. */
export function meanOf(sum: number, covered: number): number | null {
  return covered > 0 ? sum / covered : null;
}

/**
 * Time-weighted mean of each metric inside each interval: one record per interval (input order),
 * keyed by nsys metric name (`SMs Active [Throughput %]`), null where no sample held. Intervals may
 * be many (thousands of gaps) and unsorted. An export without GPU metrics gives `{}` per interval
 * (check `readMetricCatalog(loaded).available` to tell).
 */
export function timeWeightedMeans(loaded: LoadedExport, intervals: readonly TimeInterval[], opts: TimeWeightedOptions = {}): Record<string, number | null>[] {
  const r = timeWeightedSums(loaded, intervals, opts);
  if (!r) return intervals.map(() => ({}));
  const ns = r.series.length;
  return intervals.map((_, i) => {
    const rec: Record<string, number | null> = {};
    for (let s = 0; s < ns; s++) rec[r.series[s].name] = meanOf(r.sums[i * ns + s], r.coveredNs[i * ns + s]);
    return rec;
  });
}

/** Time-weighted mean of each metric over a whole set of intervals (e.g. every gap >= 1 ms), one pass. */
export function timeWeightedMeanOverSet(loaded: LoadedExport, intervals: readonly TimeInterval[], opts: TimeWeightedOptions = {}): Record<string, number | null> {
  const r = timeWeightedSums(loaded, intervals, opts);
  if (!r) return {};
  const ns = r.series.length;
  const out: Record<string, number | null> = {};
  for (let s = 0; s < ns; s++) {
    let sum = 0;
    let cov = 0;
    for (let i = 0; i < intervals.length; i++) {
      sum += r.sums[i * ns + s];
      cov += r.coveredNs[i * ns + s];
    }
    out[r.series[s].name] = meanOf(sum, cov);
  }
  return out;
}
