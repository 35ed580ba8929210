import type { MetricsSummary } from '../src/metrics/distribution.js';
import { baseMetricName, metricUnitText } from '../src/metrics/catalog.js';
import type { Cell, TableColumn, ColumnKind, DataTable } from './table.js';

/** `iterscope metrics`: one row per (GPU, metric): time-weighted mean, p50, p90, min, max. */
export function metricsTable(summary: MetricsSummary): DataTable {
  const scope =
    summary.scope.kind === 'capture'
      ? 'whole capture'
      : summary.scope.kind === 'span'
        ? `span ${summary.scope.startNs ?? '-inf'} .. ${summary.scope.endNs ?? '+inf'} ns`
        : `${summary.scope.intervals} iteration window(s), ${summary.scope.startNs} .. ${summary.scope.endNs} ns`;
  const columns: TableColumn[] = [
    { key: 'gpu', header: 'GPU', kind: 'int' },
    { key: 'metric', header: 'Metric', kind: 'text' },
    { key: 'mean', header: 'Mean', kind: 'float' },
    { key: 'p50', header: 'p50', kind: 'float' },
    { key: 'p90', header: 'p90', kind: 'float' },
    { key: 'min', header: 'Min', kind: 'float' },
    { key: 'max', header: 'Max', kind: 'float' },
    { key: 'samples', header: 'Samples', kind: 'int' },
    { key: 'coveredNs', header: 'Covered (ns)', kind: 'ns' },
  ];
  const rows = summary.metrics.map((m) => ({
    gpu: m.gpuId,
    metric: m.convertedFromHz ? `${m.metric} (from Hz)` : m.metric,
    mean: m.mean,
    p50: m.p50,
    p90: m.p90,
    min: m.min,
    max: m.max,
    samples: m.samples,
    coveredNs: m.coveredNs,
  }));
  return {
    title: `GPU metrics, time-weighted over the ${scope} (${summary.file})`,
    columns,
    rows,
    notes: [
      ...summary.notes,
      ...(summary.available ? ['mean and p50/p90 are time-weighted: each sample holds until the next sample of the same metric and GPU'] : []),
    ],
  };
}

/** Short unit for a column header: `%` for `[Throughput %]`, `MHz`, else the bracket text. */
function shortUnit(name: string): string | null {
  const u = metricUnitText(name);
  if (u == null) return null;
  return /%/.test(u) ? '%' : u;
}

/** TableColumn key of a metric in iteration / phase tables. */
export function metricColumnKey(name: string): string {
  return `metric:${name}`;
}

/**
 * Columns for per-iteration or per-phase metrics (to append to `iterationsTable` /
 * `phaseSummaryTable`): header `SMs Active (%)`, `GPC Clock Frequency (MHz)`; `%` metrics use
 * kind `percent`, others `float`.
 */
export function metricColumns(metricNames: readonly string[], suffix = ''): TableColumn[] {
  return metricNames.map((name) => {
    const unit = shortUnit(name);
    const kind: ColumnKind = unit === '%' ? 'percent' : 'float';
    return { key: metricColumnKey(name), header: `${baseMetricName(name)}${suffix}${unit ? ` (${unit})` : ''}`, kind };
  });
}

/** Cells for `metricColumns` from one record (`IterationRow.metrics` or a phase's record). */
export function metricCells(metrics: Record<string, number | null> | null | undefined, metricNames: readonly string[]): Record<string, Cell> {
  const out: Record<string, Cell> = {};
  for (const name of metricNames) out[metricColumnKey(name)] = metrics?.[name] ?? null;
  return out;
}
