import { causeRank } from '../../src/gaps/attributeCauses.js';
import type { GapAnalysis } from '../../src/gaps/analyzeGaps.js';
import type { IterationAnalysis } from '../../src/iterations/types.js';
import { baseMetricName } from '../../src/metrics/catalog.js';

/** One data point of a chart; values are the same ns (or metric values) the tables print. */
export type ChartDatum = Record<string, string | number>;

/**
 * A chart of the report as data only; `reports/html` turns it into an SVG. Every value is
 * copied from the analysis the tables are built from, so chart and table show the same numbers.
 */
export interface ReportChart {
  id: 'gpu-time-by-category' | 'gpu-metrics' | 'idle-by-cause' | 'idle-by-iteration' | 'engines-kernel-time-per-token' | 'engines-kernels-per-token' | 'compare-metric-changes';
  title: string;
  /** One sentence under the chart: what is plotted and from which table. */
  caption: string;
  data: ChartDatum[];
  /** Series names in legend order. */
  series: string[];
  /** Per-iteration charts: every iteration number on the x axis (also those with no datum), ascending. */
  iterations?: number[];
  /** `compare`'s chart: the gate's relative threshold (the band drawn around no change). */
  threshold?: number;
}

/** Distinct iteration numbers, ascending. */
function iterationNumbers(analysis: IterationAnalysis): number[] {
  return [...new Set(analysis.iterations.map((r) => r.iter))].sort((a, b) => a - b);
}

/** Segments of the per-iteration stack besides the kernel categories. */
const COPY_SERIES = ['memcpy', 'memset'] as const;

/**
 * Stacked GPU time per iteration: kernel ns by category (`categoryNs`) plus memcpy and memset ns,
 * one datum `{iter, series, ns}` per non-zero part. Iterations of several processes that share a
 * number stack together.
 */
export function gpuTimeByCategoryChart(analysis: IterationAnalysis): ReportChart {
  const data: ChartDatum[] = [];
  const used = new Set<string>();
  for (const r of analysis.iterations) {
    for (const c of analysis.categories) {
      const ns = r.categoryNs[c] ?? 0;
      if (ns > 0) {
        data.push({ iter: r.iter, series: c, ns });
        used.add(c);
      }
    }
    const copies = { memcpy: r.memcpyNs, memset: r.memsetNs };
    for (const s of COPY_SERIES) {
      if (copies[s] > 0) {
        data.push({ iter: r.iter, series: s, ns: copies[s] });
        used.add(s);
      }
    }
  }
  const copies = COPY_SERIES as readonly string[];
  const series = [...analysis.categories.filter((c) => !copies.includes(c)), ...COPY_SERIES].filter((s) => used.has(s));
  return {
    id: 'gpu-time-by-category',
    title: 'GPU time per iteration by kernel category',
    caption: 'Kernel time by category plus memcpy/memset time of each iteration (the per-category columns of the iterations table); overlapping streams make the stack exceed GPU busy time.',
    data,
    series,
    iterations: iterationNumbers(analysis),
  };
}

/** The metrics drawn under the GPU-time chart: SM and tensor activity. */
export const ACTIVITY_METRICS = ['SMs Active', 'Tensor Active'] as const;

/** Per-iteration SMs Active and Tensor Active (%), when the export sampled GPU metrics. */
export function gpuMetricsChart(analysis: IterationAnalysis): ReportChart | null {
  const names = (analysis.metricNames ?? []).filter((n) => (ACTIVITY_METRICS as readonly string[]).includes(baseMetricName(n)));
  if (names.length === 0) return null;
  const data: ChartDatum[] = [];
  for (const r of analysis.iterations) {
    for (const n of names) {
      const v = r.metrics?.[n];
      if (v != null) data.push({ iter: r.iter, series: baseMetricName(n), value: v });
    }
  }
  if (data.length === 0) return null;
  return {
    id: 'gpu-metrics',
    title: 'SM and tensor activity per iteration',
    caption: 'Time-weighted SMs Active and Tensor Active (%) over each iteration window (the metric columns of the iterations table).',
    data,
    series: [...new Set(names.map(baseMetricName))],
    iterations: iterationNumbers(analysis),
  };
}

/** Idle time by cause per device, plus the fragmented idle (the rows of the idle-by-cause table). */
export function idleByCauseChart(gaps: GapAnalysis, fragmentedLabel: string): ReportChart {
  const data: ChartDatum[] = [];
  const series: string[] = [];
  const add = (device: number, cause: string, ns: number) => {
    if (ns <= 0) return;
    data.push({ device: `GPU ${device}`, series: cause, ns });
    if (!series.includes(cause)) series.push(cause);
  };
  for (const d of gaps.devices) {
    for (const [cause, ns] of Object.entries(d.idleByCauseNs)) add(d.deviceId, cause, ns);
    add(d.deviceId, fragmentedLabel, d.fragmentedIdleNs);
  }
  return {
    id: 'idle-by-cause',
    title: 'GPU idle time by cause',
    caption: 'Idle time of the gaps by host cause, and the short (fragmented) gaps, per device (the idle-by-cause table).',
    data,
    series: bySeriesRank(series),
  };
}

/** Causes in priority order (gc, gil_wait, sync, launch_late, nvtx:*, unattributed), others last. */
function bySeriesRank(series: string[]): string[] {
  return series.map((s, i) => ({ s, i })).sort((a, b) => causeRank(a.s) - causeRank(b.s) || a.i - b.i).map((x) => x.s);
}

/** Idle time per iteration by cause (`idleByCauseNs`, with `fragmented`). */
export function idleByIterationChart(analysis: IterationAnalysis): ReportChart | null {
  const data: ChartDatum[] = [];
  const series: string[] = [];
  for (const r of analysis.iterations) {
    for (const [cause, ns] of Object.entries(r.idleByCauseNs ?? {})) {
      if (ns <= 0) continue;
      data.push({ iter: r.iter, series: cause, ns });
      if (!series.includes(cause)) series.push(cause);
    }
  }
  if (data.length === 0) return null;
  return {
    id: 'idle-by-iteration',
    title: 'GPU idle time per iteration by cause',
    caption: 'Idle time of the gaps that start in each iteration window, by cause; fragmented = gaps shorter than the minimum gap.',
    data,
    series: bySeriesRank(series),
    iterations: iterationNumbers(analysis),
  };
}
