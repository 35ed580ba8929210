import type { IterationAnalysis } from '../src/iterations/types.js';
import type { PhaseSummary } from '../src/iterations/summary.js';
import type { CategoryRule } from '../src/categories/rules.js';
import type { TableColumn, DataTable } from './table.js';
import { metricCells, metricColumns } from './metricsReport.js';

/** What the iterations table shows of an analysis. */
type IterationsTableInput = Pick<IterationAnalysis, 'file' | 'categories' | 'iterations' | 'metricNames' | 'noGpuWork'> & { coverage: Pick<IterationAnalysis['coverage'], 'notes'> };

/** Categories that hold time in at least one iteration, in table order. */
export function usedCategories(analysis: Pick<IterationAnalysis, 'categories' | 'iterations'>): string[] {
  return analysis.categories.filter((c) => analysis.iterations.some((r) => (r.categoryNs[c] ?? 0) > 0));
}

/** The iterations table without a row: a capture with no GPU work has no iteration (the note says why). */
export function noIterationsTable(file: string): DataTable {
  return iterationsTableOf({ file, categories: [], iterations: [], coverage: { notes: [] } });
}

/** The per-phase table without a row. */
export function noPhasesTable(): DataTable {
  return phaseSummaryTable([], []);
}

/** One row per iteration: window, busy/idle, kernel time by category, the joined batch. */
export function iterationsTable(analysis: IterationAnalysis): DataTable {
  return iterationsTableOf(analysis);
}

/** The iterations table's columns of GPU work, left out when the capture recorded none. */
const GPU_COLUMN_KEYS = new Set(['gpuBusyNs', 'gpuIdleNs', 'kernelNs', 'kernelCount', 'memcpyNs', 'attentionNsPer1kKv']);

/** Columns of vLLM's detailed step annotation (query tokens are the Ctx/Gen tokens columns). */
const TOKEN_DETAIL_COLUMNS: TableColumn[] = [
  { key: 'contextKvTokens', header: 'Ctx KV tokens', kind: 'int' },
  { key: 'generationKvTokens', header: 'Gen KV tokens', kind: 'int' },
  { key: 'contextQq', header: 'Ctx q*q', kind: 'int' },
  { key: 'contextQk', header: 'Ctx q*kv', kind: 'int' },
  { key: 'generationQq', header: 'Gen q*q', kind: 'int' },
  { key: 'generationQk', header: 'Gen q*kv', kind: 'int' },
  { key: 'attentionNsPer1kKv', header: 'Attention ns / 1k KV tokens', kind: 'float' },
];

function tokenDetailCells(r: IterationsTableInput['iterations'][number]): DataTable['rows'][number] {
  const d = r.tokenDetail;
  const ns = r.attentionNsPer1kKvTokens;
  return {
    contextKvTokens: d?.context?.kvTokens ?? null,
    generationKvTokens: d?.generation?.kvTokens ?? null,
    contextQq: d?.context?.qqCompute ?? null,
    contextQk: d?.context?.qkCompute ?? null,
    generationQq: d?.generation?.qqCompute ?? null,
    generationQk: d?.generation?.qkCompute ?? null,
    attentionNsPer1kKv: ns == null ? null : Math.round(ns),
  };
}

function iterationsTableOf(analysis: IterationsTableInput): DataTable {
  const cats = usedCategories(analysis);
  const multiPid = new Set(analysis.iterations.map((r) => r.pid)).size > 1;
  // vLLM's log and labels (and the PyTorch text log) count generation tokens; the others do not.
  const genTokens = analysis.iterations.some((r) => r.generationTokens != null);
  // SGLang steps no log line numbers or describes: say what the number and the phase are.
  const captureOrder = analysis.iterations.length > 0 && analysis.iterations.every((r) => r.captureOrder);
  const phaseFrom = analysis.iterations.some((r) => r.phaseBasis);
  // vLLM's detailed annotation: KV tokens and compute proxies per phase, attention against KV.
  const detail = analysis.iterations.some((r) => r.tokenDetail);
  const columns: TableColumn[] = [
    ...(multiPid ? [{ key: 'pid', header: 'PID', kind: 'int' } as TableColumn] : []),
    { key: 'iter', header: captureOrder ? 'Capture step' : 'Iter', kind: 'int' },
    { key: 'phase', header: 'Phase', kind: 'text' },
    ...(phaseFrom ? [{ key: 'phaseBasis', header: 'Phase from', kind: 'text' } as TableColumn] : []),
    { key: 'contextRequests', header: 'Ctx reqs', kind: 'int' },
    { key: 'contextTokens', header: 'Ctx tokens', kind: 'int' },
    { key: 'generationRequests', header: 'Gen reqs', kind: 'int' },
    ...(genTokens ? [{ key: 'generationTokens', header: 'Gen tokens', kind: 'int' } as TableColumn] : []),
    ...(detail ? TOKEN_DETAIL_COLUMNS : []),
    { key: 'startNs', header: 'Start (ns)', kind: 'ns' },
    { key: 'wallNs', header: 'Wall (ns)', kind: 'ns' },
    { key: 'gpuBusyNs', header: 'GPU busy (ns)', kind: 'ns' },
    { key: 'gpuIdleNs', header: 'GPU idle (ns)', kind: 'ns' },
    { key: 'kernelNs', header: 'Kernel (ns)', kind: 'ns' },
    { key: 'kernelCount', header: 'Kernels', kind: 'int' },
    ...cats.map((c) => ({ key: `cat:${c}`, header: `${c} (ns)`, kind: 'ns', group: 'categories' }) as TableColumn),
    { key: 'memcpyNs', header: 'memcpy (ns)', kind: 'ns' },
    ...metricColumns(analysis.metricNames ?? []),
    { key: 'matched', header: 'Log', kind: 'text' },
  ];
  // A capture without GPU work: the GPU columns would be zeros that say nothing (the notes say why).
  const shown = analysis.noGpuWork ? columns.filter((c) => !GPU_COLUMN_KEYS.has(c.key) && c.group !== 'categories') : columns;
  const rows = analysis.iterations.map((r) => {
    const row: DataTable['rows'][number] = {
      pid: r.pid,
      iter: r.iter,
      phase: r.phase,
      phaseBasis: r.phaseBasis ?? (phaseFrom ? 'counts' : undefined),
      contextRequests: r.contextRequests,
      contextTokens: r.contextTokens,
      generationRequests: r.generationRequests,
      generationTokens: r.generationTokens,
      startNs: r.startNs,
      wallNs: r.wallNs,
      gpuBusyNs: r.gpuBusyNs,
      gpuIdleNs: r.gpuIdleNs,
      kernelNs: r.kernelNs,
      kernelCount: r.kernelCount,
      memcpyNs: r.memcpyNs,
      matched: r.matched ? (r.labelMatchesLog === false ? 'mismatch' : 'yes') : 'no',
    };
    for (const c of cats) row[`cat:${c}`] = r.categoryNs[c] ?? 0;
    if (detail) Object.assign(row, tokenDetailCells(r));
    Object.assign(row, metricCells(r.metrics, analysis.metricNames ?? []));
    return row;
  });
  return { title: `Iterations (${analysis.file})`, columns: shown, rows, notes: analysis.coverage.notes };
}

/** `iterations --summary`: one row per phase. */
export function phaseSummaryTable(phases: PhaseSummary[], categories: string[], metricNames: string[] = []): DataTable {
  const cats = categories.filter((c) => phases.some((p) => (p.meanCategoryNs[c] ?? 0) > 0));
  const genTokens = phases.some((p) => p.gpuNsPerGenerationToken !== undefined);
  const kv = phases.some((p) => p.attentionNsPer1kKvTokens !== undefined);
  const columns: TableColumn[] = [
    { key: 'phase', header: 'Phase', kind: 'text' },
    { key: 'iterations', header: 'Iterations', kind: 'int' },
    { key: 'meanGpuBusyNs', header: 'GPU busy mean (ns)', kind: 'ns' },
    { key: 'p50GpuBusyNs', header: 'GPU busy p50 (ns)', kind: 'ns' },
    { key: 'p90GpuBusyNs', header: 'GPU busy p90 (ns)', kind: 'ns' },
    { key: 'p99GpuBusyNs', header: 'GPU busy p99 (ns)', kind: 'ns' },
    { key: 'meanIdlePct', header: 'Idle mean (%)', kind: 'percent' },
    { key: 'p50IdlePct', header: 'Idle p50 (%)', kind: 'percent' },
    { key: 'p90IdlePct', header: 'Idle p90 (%)', kind: 'percent' },
    { key: 'p99IdlePct', header: 'Idle p99 (%)', kind: 'percent' },
    ...cats.map((c) => ({ key: `cat:${c}`, header: `${c} mean (ns)`, kind: 'ns', group: 'categories' }) as TableColumn),
    { key: 'gpuNsPerContextToken', header: 'GPU ns / ctx token', kind: 'float' },
    { key: 'gpuNsPerGenerationRequest', header: 'GPU ns / gen req', kind: 'float' },
    ...(genTokens ? [{ key: 'gpuNsPerGenerationToken', header: 'GPU ns / gen token', kind: 'float' } as TableColumn] : []),
    ...(kv ? [{ key: 'attentionNsPer1kKv', header: 'Attention ns / 1k KV tokens', kind: 'float' } as TableColumn] : []),
    ...metricColumns(metricNames),
  ];
  const rows = phases.map((p) => {
    const row: DataTable['rows'][number] = {
      phase: p.phase,
      iterations: p.iterations,
      meanGpuBusyNs: Math.round(p.meanGpuBusyNs),
      p50GpuBusyNs: p.p50GpuBusyNs,
      p90GpuBusyNs: p.p90GpuBusyNs,
      p99GpuBusyNs: p.p99GpuBusyNs,
      meanIdlePct: p.meanIdleShare * 100,
      p50IdlePct: p.p50IdleShare * 100,
      p90IdlePct: p.p90IdleShare * 100,
      p99IdlePct: p.p99IdleShare * 100,
      gpuNsPerContextToken: p.gpuNsPerContextToken == null ? null : Math.round(p.gpuNsPerContextToken),
      gpuNsPerGenerationRequest: p.gpuNsPerGenerationRequest == null ? null : Math.round(p.gpuNsPerGenerationRequest),
      gpuNsPerGenerationToken: p.gpuNsPerGenerationToken == null ? null : Math.round(p.gpuNsPerGenerationToken),
      attentionNsPer1kKv: p.attentionNsPer1kKvTokens == null ? null : Math.round(p.attentionNsPer1kKvTokens),
    };
    for (const c of cats) row[`cat:${c}`] = Math.round(p.meanCategoryNs[c] ?? 0);
    Object.assign(row, metricCells(p.metrics, metricNames));
    return row;
  });
  return { title: 'Iterations by phase', columns, rows };
}

/** `iterscope categories`: the ordered rule table in force. */
export function categoryRulesTable(rules: readonly CategoryRule[]): DataTable {
  return {
    title: 'Kernel categories (first matching rule wins)',
    columns: [
      { key: 'order', header: 'Order', kind: 'int' },
      { key: 'category', header: 'Category', kind: 'text' },
      { key: 'pattern', header: 'Pattern', kind: 'text' },
      { key: 'flags', header: 'Flags', kind: 'text' },
    ],
    rows: rules.map((r, i) => ({ order: i + 1, category: r.category, pattern: r.pattern, flags: r.flags ?? '' })),
  };
}
