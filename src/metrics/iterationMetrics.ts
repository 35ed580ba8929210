import type { LoadedExport } from '../load/loadedExport.js';
import { aq } from '../math/arqueroOps.js';
import { PHASES, type Phase } from '../iterations/phase.js';
import { ITERATION_METRICS, metricGpuByPid, readMetricCatalog, resolveMetrics, type MetricCatalog, type MetricDef } from './catalog.js';
import { accumulateIntervals, meanOf } from './timeWeighted.js';

/**
 * GPU metrics per iteration window (and per phase) for `iterations`: the time-weighted mean of SMs
 * Active, SM Issue, Tensor Active, DRAM read/write bandwidth, GR Active and GPC clock inside each
 * iteration's [startNs, endNs), for the GPU its process ran on. One pass over the samples for all
 * iterations.
 */

/** What the function needs of an iteration row (`IterationRow` fits). */
export interface IterationWindowLike {
  iter: number;
  pid: number;
  startNs: number;
  endNs: number;
  phase?: Phase | string;
}

export interface IterationMetricsResult {
  /** False when the export has no GPU metrics: add no `metrics` field anywhere. */
  available: boolean;
  /** One-line notes for people (why there are no metrics, metrics not found, Hz -> MHz, ...). */
  notes: string[];
  /** Keys of the per-iteration records (nsys names) in ITERATION_METRICS order, over all GPUs read. */
  metricNames: string[];
  /** GPU read for each iteration (input order; -1 when unavailable). */
  gpuIds: number[];
  /** Aligned with the input rows: metric name -> time-weighted mean (null: no sample held). Null when unavailable. */
  perIteration: (Record<string, number | null> | null)[];
  /** Per iteration i and key k (`metricNames`): sums[i * K + k] (value x ns) and coveredNs[i * K + k]; for exact aggregation. */
  sums: Float64Array;
  coveredNs: Float64Array;
  /** Milliseconds spent (catalog + pass). */
  ms: number;
}

export interface IterationMetricsOptions {
  /** Metric names (default ITERATION_METRICS). */
  metrics?: readonly string[];
  /** Force one GPU for every iteration (default: the GPU each process's kernels ran on). */
  gpu?: number;
  catalog?: MetricCatalog;
}

function unavailable(n: number, notes: string[], t0: number): IterationMetricsResult {
  return { available: false, notes, metricNames: [], gpuIds: new Array(n).fill(-1), perIteration: new Array(n).fill(null), sums: new Float64Array(0), coveredNs: new Float64Array(0), ms: performance.now() - t0 };
}

/**
 * Metrics of each iteration window. On an export without GPU metrics this returns at once
 * (`available: false`, one note) after a table-existence check.
 */
export function iterationMetrics(loaded: LoadedExport, iterations: readonly IterationWindowLike[], opts: IterationMetricsOptions = {}): IterationMetricsResult {
  const t0 = performance.now();
  const n = iterations.length;
  const catalog = opts.catalog ?? readMetricCatalog(loaded);
  if (!catalog.available) return unavailable(n, [catalog.reason ?? 'no GPU metrics in this export'], t0);
  const wanted = opts.metrics ?? ITERATION_METRICS;
  const notes: string[] = [];

  // GPU of each iteration.
  const pids = [...new Set(iterations.map((r) => r.pid))];
  const gpuOfPid = opts.gpu !== undefined ? new Map(pids.map((p) => [p, opts.gpu!])) : metricGpuByPid(loaded, catalog, pids);
  const gpuIds = iterations.map((r) => gpuOfPid.get(r.pid) ?? catalog.gpus[0].gpuId);
  const usedGpus = [...new Set(gpuIds)].sort((a, b) => a - b);

  // Series: the wanted metrics of each GPU used. Keys: nsys names, in wanted order.
  const series: MetricDef[] = [];
  const keyOf: number[] = [];
  const metricNames: string[] = [];
  for (const g of usedGpus) {
    if (!catalog.gpus.some((x) => x.gpuId === g)) {
      notes.push(`GPU ${g} was not sampled (GPU metrics cover GPU ${catalog.gpus.map((x) => x.gpuId).join(', ')})`);
      continue;
    }
    const r = resolveMetrics(catalog, g, wanted);
    if (r.missing.length) notes.push(`GPU ${g}: no metric named ${r.missing.map((m) => `'${m}'`).join(', ')}`);
    for (const d of r.found) {
      let k = metricNames.indexOf(d.name);
      if (k < 0) k = metricNames.push(d.name) - 1;
      series.push(d);
      keyOf.push(k);
    }
  }
  if (usedGpus.length > 1) notes.push(`GPU metrics per iteration read from each process's GPU (${pids.map((p) => `pid ${p}: GPU ${gpuOfPid.get(p)}`).join(', ')})`);

  const acc = accumulateIntervals(loaded, catalog, series, iterations);
  const ns = series.length;
  const K = metricNames.length;
  const sums = new Float64Array(n * K);
  const coveredNs = new Float64Array(n * K);
  const perIteration: (Record<string, number | null> | null)[] = [];
  for (let i = 0; i < n; i++) {
    const rec: Record<string, number | null> = {};
    const g = gpuIds[i];
    for (let s = 0; s < ns; s++) {
      if (series[s].gpuId !== g) continue;
      const k = keyOf[s];
      sums[i * K + k] = acc.sums[i * ns + s];
      coveredNs[i * K + k] = acc.coveredNs[i * ns + s];
    }
    for (let k = 0; k < K; k++) rec[metricNames[k]] = meanOf(sums[i * K + k], coveredNs[i * K + k]);
    perIteration.push(rec);
  }
  const converted = series.filter((_, s) => acc.scale[s] !== 1).map((d) => d.name);
  if (converted.length) notes.push(`${[...new Set(converted)].join(', ')}: stored in Hz, reported in MHz`);
  if (acc.stats.restarts.length) notes.push(`GPU metrics read in ${acc.stats.passes} passes (${acc.stats.restarts.join('; ')})`);
  const without = perIteration.filter((r) => r && Object.values(r).every((v) => v === null)).length;
  if (without) notes.push(`${without} of ${n} iterations have no GPU metric sample in their window`);
  return { available: true, notes, metricNames, gpuIds, perIteration, sums, coveredNs, ms: performance.now() - t0 };
}

/**
 * Per phase (`iterations --summary`): the time-weighted mean of each metric over all windows of the
 * phase's iterations (sum of value x ns / sum of covered ns; not a mean of iteration means). Uses
 * the sums of `iterationMetrics`: no second pass. Phases in PHASES order; empty when unavailable.
 */
export function phaseMetrics(iterations: readonly IterationWindowLike[], result: IterationMetricsResult): Map<string, Record<string, number | null>> {
  const out = new Map<string, Record<string, number | null>>();
  if (!result.available || iterations.length === 0) return out;
  const K = result.metricNames.length;
  // Phases in PHASES order, then any other phase in order of first appearance.
  const phase = iterations.map((r) => String(r.phase ?? 'unknown'));
  const order = new Map<string, number>(PHASES.map((p, i) => [p, i]));
  for (const p of phase) if (!order.has(p)) order.set(p, order.size);
  // One row per iteration: value x ns and covered ns of each metric k (columns s<k>, c<k>).
  const columns: Record<string, ArrayLike<unknown>> = { phaseOrder: phase.map((p) => order.get(p)!), phase };
  const sums: Record<string, string> = {};
  for (let k = 0; k < K; k++) {
    columns[`s${k}`] = Float64Array.from(iterations, (_, i) => result.sums[i * K + k]);
    columns[`c${k}`] = Float64Array.from(iterations, (_, i) => result.coveredNs[i * K + k]);
    sums[`s${k}`] = `op.sum(d.s${k})`;
    sums[`c${k}`] = `op.sum(d.c${k})`;
  }
  const byPhase = aq.table(columns).groupby('phaseOrder', 'phase').rollup(sums).orderby('phaseOrder');
  for (const p of byPhase.objects() as Record<string, number>[]) {
    const rec: Record<string, number | null> = {};
    for (let k = 0; k < K; k++) rec[result.metricNames[k]] = meanOf(p[`s${k}`] ?? 0, p[`c${k}`] ?? 0);
    out.set(String(p.phase), rec);
  }
  return out;
}
