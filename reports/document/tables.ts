import type { NvtxGpuProjection } from '../../src/analysis/nvtxGpuProjection.js';
import type { IterationAnalysis, IterationRow } from '../../src/iterations/types.js';
import type { PhaseSummary } from '../../src/iterations/summary.js';
import { iterationsTable } from '../iterationsReport.js';
import { metricCells, metricColumns } from '../metricsReport.js';
import type { TableColumn, DataTable } from '../table.js';
import { formatNs } from '../units.js';
import type { CategoryTime } from '../../src/analysis/categoryTime.js';
import type { HostSummary } from '../../src/gaps/hostSummary.js';

/** A two-column Field / Value table (run info, GC/GIL, coverage). */
export function factsTable(title: string | undefined, facts: readonly (readonly [string, string])[]): DataTable {
  return {
    ...(title ? { title } : {}),
    columns: [
      { key: 'field', header: 'Field', kind: 'text' },
      { key: 'value', header: 'Value', kind: 'text' },
    ],
    rows: facts.map(([field, value]) => ({ field, value })),
  };
}

/** How the report names phases in prose and headers. */
export const PHASE_LABELS: Readonly<Record<string, string>> = { context: 'context-only', mixed: 'mixed', generation: 'generation-only', speculative: 'speculative (verify)', empty: 'empty', unknown: 'unknown phase' };

/**
 * Kernel time by category: in iterations (total, share, per phase) and over the whole capture.
 * Without iterations (`ct.phases` empty) only the whole-capture columns.
 */
export function categoryTable(ct: CategoryTime): DataTable {
  const inIterations = ct.phases.length > 0;
  const columns: TableColumn[] = [
    { key: 'category', header: 'Category', kind: 'text' },
    ...(inIterations
      ? [
          { key: 'iterationNs', header: 'In iterations (ns)', kind: 'ns' } as TableColumn,
          { key: 'iterationPercent', header: 'Of iteration kernel time (%)', kind: 'percent' } as TableColumn,
          ...ct.phases.map((p) => ({ key: `phase:${p.phase}`, header: `${PHASE_LABELS[p.phase] ?? p.phase}, ${p.iterations} iters (ns)`, kind: 'ns' }) as TableColumn),
        ]
      : []),
    { key: 'captureNs', header: 'Whole capture (ns)', kind: 'ns' },
    { key: 'capturePercent', header: 'Of capture kernel time (%)', kind: 'percent' },
  ];
  const rows: DataTable['rows'] = ct.rows.map((r) => {
    const row: DataTable['rows'][number] = { category: r.category, iterationNs: r.iterationNs, iterationPercent: r.iterationPercent, captureNs: r.captureNs, capturePercent: r.capturePercent };
    for (const p of ct.phases) row[`phase:${p.phase}`] = r.phaseNs[p.phase] ?? 0;
    return row;
  });
  const total: DataTable['rows'][number] = { category: 'total', iterationNs: ct.iterationKernelNs, iterationPercent: ct.iterationKernelNs > 0 ? 100 : 0, captureNs: ct.captureKernelNs, capturePercent: ct.captureKernelNs > 0 ? 100 : 0 };
  for (const p of ct.phases) total[`phase:${p.phase}`] = p.kernelNs;
  rows.push(total);
  return { title: 'Kernel time by category', columns, rows };
}

/** The slowest iterations by wall time (ties: lower iteration first). */
export function slowestIterations(rows: readonly IterationRow[], n: number): IterationRow[] {
  return [...rows].sort((a, b) => b.wallNs - a.wallNs || a.iter - b.iter || a.pid - b.pid).slice(0, Math.max(0, n));
}

/**
 * The `iterations` table, whole when it has at most `maxRows` rows, else the `slowest` slowest
 * iterations (slowest first). Rows are built by `iterationsTable`, so cells equal `iterations`.
 */
export function reportIterationsTable(analysis: IterationAnalysis, maxRows: number, slowest: number): DataTable {
  const n = analysis.iterations.length;
  if (n <= maxRows) return { ...iterationsTable(analysis), title: `All ${n} iterations`, notes: [] };
  const rows = slowestIterations(analysis.iterations, slowest);
  return {
    ...iterationsTable({ ...analysis, iterations: rows }),
    title: `Slowest ${rows.length} of ${n} iterations (by wall time; the phase table above covers all)`,
    notes: [],
  };
}

/** GPU metrics per phase (time-weighted over the phase's iteration windows). */
export function phaseMetricsTable(phases: readonly PhaseSummary[], metricNames: readonly string[]): DataTable {
  return {
    title: 'GPU metrics by phase (time-weighted over the iteration windows)',
    columns: [{ key: 'phase', header: 'Phase', kind: 'text' }, { key: 'iterations', header: 'Iterations', kind: 'int' }, ...metricColumns(metricNames)],
    rows: phases.map((p) => ({ phase: p.phase, iterations: p.iterations, ...metricCells(p.metrics, metricNames) })),
  };
}

/** `nvtx_gpu_proj_sum`, the columns a report reader needs, top `top` rows. */
export function nvtxProjectionTable(p: NvtxGpuProjection, top: number): DataTable {
  const rows = p.rows.slice(0, top > 0 ? top : undefined);
  return {
    title: `NVTX ranges projected onto the GPU (nvtx_gpu_proj_sum): top ${rows.length} of ${p.rows.length}`,
    columns: [
      { key: 'totalProjNs', header: 'Total Proj Time (ns)', kind: 'ns' },
      { key: 'totalRangeNs', header: 'Total Range Time (ns)', kind: 'ns' },
      { key: 'instances', header: 'Range Instances', kind: 'int' },
      { key: 'projAvg', header: 'Proj Avg (ns)', kind: 'decimal1' },
      { key: 'projMax', header: 'Proj Max (ns)', kind: 'ns' },
      { key: 'totalGpuOps', header: 'Total GPU Ops', kind: 'int' },
      { key: 'style', header: 'Style', kind: 'text' },
      { key: 'range', header: 'Range', kind: 'text' },
    ],
    rows: rows as unknown as DataTable['rows'],
  };
}

const pct = (part: number, whole: number) => (whole > 0 ? `${((part * 100) / whole).toFixed(1)}%` : 'n/a');

/** Python GC and GIL facts, or a line saying they were not traced. */
export function hostTable(host: HostSummary): DataTable {
  const facts: [string, string][] = [];
  const { gc, gil } = host;
  if (gc.traced) {
    facts.push(['GC collections (Python GC ranges)', String(gc.collections)]);
    facts.push(['GC time (sum of collections)', formatNs(gc.totalNs)]);
    if (gc.coveredNs !== gc.totalNs) facts.push(['GC time (covered, overlaps merged)', formatNs(gc.coveredNs)]);
    facts.push(['Longest collection', formatNs(gc.longestNs)]);
    facts.push(['GPU idle in gaps attributed to gc', `${formatNs(gc.gapIdleNs)} (${gc.gapsPrimary} gaps with gc as primary cause)`]);
  } else {
    facts.push(['GC', 'not traced (no Python GC NVTX ranges; TLLM_PROFILE_RECORD_GC=1 records them)']);
  }
  if (gil.traced) {
    for (const t of gil.executorThreads) {
      facts.push([`GIL wait, executor thread (pid ${t.pid}, tid ${t.tid})`, `${formatNs(t.totalNs)} in ${t.waits} waits (longest ${formatNs(t.longestNs)})`]);
      if (t.inIterationsNs != null && t.iterationWallNs) {
        facts.push([`GIL wait inside the iteration windows (pid ${t.pid})`, `${formatNs(t.inIterationsNs)} (${pct(t.inIterationsNs, t.iterationWallNs)} of ${formatNs(t.iterationWallNs)})`]);
      }
    }
    facts.push(['GPU idle in gaps attributed to gil_wait', `${formatNs(gil.gapIdleNs)} (${gil.gapsPrimary} gaps with gil_wait as primary cause)`]);
  } else {
    facts.push(['GIL', 'not traced (no GIL Trace NVTX domain; nsys profile -t python-gil records it)']);
  }
  return factsTable(undefined, facts);
}
