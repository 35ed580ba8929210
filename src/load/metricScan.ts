import { selectGpuMetricSamples } from '../../queries/gpuMetrics.js';
import { forEachRow } from '../../queries/run.js';
import type { LoadedExport } from './loadedExport.js';
import { isTimeNs } from '../../queries/validRows.js';
import { noteExcludedRows, unusableTime } from '../export/excludedRows.js';
import type { MetricDef } from './metricReads.js';

/**
 * The one streaming pass over `GPU_METRICS` every metric analysis shares.
 *
 * Semantics (sample-and-hold): a sample of series s = (GPU, metric) at time t with value v holds
 * over [t, t') where t' is the next sample of the same series. The last sample of a series holds
 * for no time (coverage ends there); before a series' first sample nothing holds. Equal timestamps:
 * the later row replaces the earlier (zero-length hold).
 *
 * The pass hands each hold to a sink as `segment(s, a, b, v)` (b > a, v raw as stored). SQLite
 * drives the scan (`forEachRow`): only the series asked for reach JS, and only samples inside the
 * time window (padded so the sample holding at the window start and the one ending the window's
 * last hold are included).
 *
 * No assumption is trusted without a check:
 * - rows are read in table order (time order on every export seen) and each series is checked to
 *   be non-decreasing in time; if one is not, the pass restarts with ORDER BY timestamp;
 * - with a time window, each series must have a sample at or before the window start and one at or
 *   after its end inside the padded selection; if not (a sampling gap longer than the padding, or a
 *   window reaching past the first/last sample), the pass restarts without the time filter.
 * At most three passes; on the exports seen, one.
 */

export interface SegmentSink {
  /** Raw value `v` of series `s` held over [a, b), b > a. */
  segment(s: number, a: number, b: number, v: number): void;
}

/** Span the sinks care about; samples outside it matter only as boundaries. */
export interface ScanWindow {
  lo: number;
  hi: number;
}

export interface ScanStats {
  /** SQL passes run (1 normally; restarts are explained in `restarts`). */
  passes: number;
  restarts: string[];
  timeFiltered: boolean;
  orderedBySql: boolean;
  /** Rows handed to JS in the final pass. */
  rows: number;
  ms: number;
}

export interface ScanResult<S> {
  sink: S;
  /** Multiplier for each series' raw values: 1e-6 for a clock named `[MHz]` recorded in Hz, else 1. */
  scale: Float64Array;
  /** Samples of each series in the rows read. */
  samples: Float64Array;
  stats: ScanStats;
}

class Restart {
  constructor(readonly kind: 'unfiltered' | 'ordered', readonly why: string) {}
}

/** A clock named `[MHz]` whose values exceed 100000 can only be Hz (nsys 2025.x stores Hz). */
const HZ_AS_MHZ_THRESHOLD = 1e5;

/** Padding around the window: covers the boundary samples unless sampling paused longer than this. */
function paddingNs(samplingHz: number | null | undefined): number {
  const byRate = samplingHz && samplingHz > 0 ? (200 / samplingHz) * 1e9 : 0;
  return Math.max(100e6, byRate);
}

/**
 * Streams the holds of `series` through a sink made by `makeSink` (called again on a restart).
 * `window` null: the whole table (no time filter).
 */
export function scanSegments<S extends SegmentSink>(
  loaded: LoadedExport,
  series: readonly MetricDef[],
  window: ScanWindow | null,
  makeSink: () => S,
  opts: { samplingHz?: number | null } = {},
): ScanResult<S> {
  const t0 = performance.now();
  const ns = series.length;
  if (ns === 0) {
    return { sink: makeSink(), scale: new Float64Array(0), samples: new Float64Array(0), stats: { passes: 0, restarts: [], timeFiltered: false, orderedBySql: false, rows: 0, ms: 0 } };
  }
  const index = seriesIndex(series);
  const metricIds = [...new Set(series.map((d) => d.metricId))];
  const gpuIds = [...new Set(series.map((d) => d.gpuId))];

  const finite = window != null && Number.isFinite(window.lo) && Number.isFinite(window.hi) && window.hi >= window.lo;
  let timeFilter = finite;
  let ordered = false;
  const restarts: string[] = [];
  const pad = paddingNs(opts.samplingHz);
  const lo = finite ? window!.lo : -Infinity;
  const hi = finite ? window!.hi : Infinity;
  const state: SeriesState = { lastT: new Float64Array(ns), lastV: new Float64Array(ns), count: new Float64Array(ns), maxV: new Float64Array(ns) };

  for (let pass = 1; ; pass++) {
    const sink = makeSink();
    const filtered = timeFilter;
    const q = selectGpuMetricSamples(loaded.handle, {
      startNs: filtered ? lo - pad : undefined,
      endNs: filtered ? hi + pad : undefined,
      metricIds,
      gpuIds,
      orderByTime: ordered,
    });
    const { rows, restart: stopped } = scanPass(loaded, q, series, index, state, sink, { filtered, lo, pad });
    const restart = stopped ?? (filtered ? unsampledWindowEnd(series, state.lastT, hi, pad) : null);
    if (restart) {
      // Each restart removes its cause for good (filter off / ORDER BY on): at most three passes.
      if ((restart.kind === 'unfiltered' && !filtered) || (restart.kind === 'ordered' && ordered)) {
        throw new Error(`GPU_METRICS scan: ${restart.why}`);
      }
      restarts.push(restart.why);
      if (restart.kind === 'unfiltered') timeFilter = false;
      else ordered = true;
      continue;
    }
    return {
      sink,
      scale: clockScales(series, state.maxV),
      samples: state.count.slice(),
      stats: { passes: pass, restarts, timeFiltered: filtered, orderedBySql: ordered, rows, ms: performance.now() - t0 },
    };
  }
}

/** (gpuId, metricId) -> series index through a dense table (ids are small), else a Map. */
function seriesIndex(series: readonly MetricDef[]) {
  let maxGpu = 0;
  let maxMetric = 0;
  for (const d of series) {
    maxGpu = Math.max(maxGpu, d.gpuId);
    maxMetric = Math.max(maxMetric, d.metricId);
  }
  const stride = maxMetric + 1;
  const dense = (maxGpu + 1) * stride <= 1 << 20 && series.every((d) => d.gpuId >= 0 && d.metricId >= 0);
  const lut = new Int32Array(dense ? (maxGpu + 1) * stride : 0).fill(-1);
  const map = new Map<number, number>();
  series.forEach((d, i) => {
    if (dense) lut[d.gpuId * stride + d.metricId] = i;
    else map.set(d.gpuId * 4294967296 + d.metricId, i);
  });
  return { dense, stride, lut, map };
}

/** Per series, over one pass: the last sample's time (NaN: none yet) and value, the samples, the largest value. */
interface SeriesState {
  lastT: Float64Array;
  lastV: Float64Array;
  count: Float64Array;
  maxV: Float64Array;
}

/**
 * One pass over the rows of `q`: each sample ends the hold of the series' previous one, handed to
 * the sink. Returns the rows that reached JS, and the restart the pass stopped at (null: none): a
 * series out of time order, or (time filter on) one without a sample before the window.
 */
function scanPass(
  loaded: LoadedExport,
  q: ReturnType<typeof selectGpuMetricSamples>,
  series: readonly MetricDef[],
  index: ReturnType<typeof seriesIndex>,
  state: SeriesState,
  sink: SegmentSink,
  w: { filtered: boolean; lo: number; pad: number },
): { rows: number; restart: Restart | null } {
  const { dense, stride, lut, map } = index;
  const lutSize = lut.length;
  const { lastT, lastV, count, maxV } = state;
  const { filtered, lo, pad } = w;
  lastT.fill(NaN);
  lastV.fill(0);
  count.fill(0);
  maxV.fill(-Infinity);
  let rows = 0;
  let invalid = 0;
  const onRow = (g: number, m: number, t: number, v: number) => {
    let s: number;
    if (dense) {
      const k = g * stride + m;
      s = m < stride && k >= 0 && k < lutSize ? lut[k] : -1;
    } else s = map.get(g * 4294967296 + m) ?? -1;
    if (s < 0 || v === null) return;
    // A damaged or edited export's time that is no whole ns: left out and counted, as every loader does.
    if (!isTimeNs(t)) {
      invalid++;
      return;
    }
    rows++;
    const pt = lastT[s];
    if (pt !== pt) {
      // First sample of the series in this selection.
      if (filtered && t > lo) throw new Restart('unfiltered', `${series[s].name} (GPU ${series[s].gpuId}) has no sample within ${(pad / 1e6).toFixed(0)} ms before the window`);
    } else if (t < pt) {
      throw new Restart('ordered', 'GPU_METRICS rows are not in time order');
    } else if (t > pt) {
      sink.segment(s, pt, t, lastV[s]);
    }
    lastT[s] = t;
    lastV[s] = v;
    count[s]++;
    if (v > maxV[s]) maxV[s] = v;
  };
  try {
    forEachRow(loaded.handle, q, onRow);
  } catch (err) {
    if (!(err instanceof Restart)) throw err;
    return { rows, restart: err };
  }
  noteExcludedRows(loaded.handle, 'GPU_METRICS', invalid, unusableTime('timestamp'));
  return { rows, restart: null };
}

/** The restart a time-filtered pass needs when a series has no sample at or after the window's end. */
function unsampledWindowEnd(series: readonly MetricDef[], lastT: Float64Array, hi: number, pad: number): Restart | null {
  for (let s = 0; s < series.length; s++) {
    if (!(lastT[s] >= hi)) return new Restart('unfiltered', `${series[s].name} (GPU ${series[s].gpuId}) has no sample within ${(pad / 1e6).toFixed(0)} ms after the window`);
  }
  return null;
}

/** Per series, the multiplier of its raw values: 1e-6 for a clock named `[MHz]` whose values can only be Hz. */
function clockScales(series: readonly MetricDef[], maxV: Float64Array): Float64Array {
  const scale = new Float64Array(series.length).fill(1);
  for (let s = 0; s < series.length; s++) if (series[s].unit === 'MHz' && maxV[s] > HZ_AS_MHZ_THRESHOLD) scale[s] = 1e-6;
  return scale;
}
