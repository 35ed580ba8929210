import { aq, column, op } from '../math/arqueroOps.js';
import { PHASES, type IterationRow, type Phase } from './analyzeIterations.js';

/** Statistics of one phase (context-only, mixed, generation-only, ...). */
export interface PhaseSummary {
  phase: Phase;
  iterations: number;
  meanGpuBusyNs: number;
  p50GpuBusyNs: number;
  p90GpuBusyNs: number;
  p99GpuBusyNs: number;
  /** Mean of gpuIdleNs / wallNs. */
  meanIdleShare: number;
  p50IdleShare: number;
  p90IdleShare: number;
  p99IdleShare: number;
  meanWallNs: number;
  meanKernelNs: number;
  /** Mean kernel ns per iteration, by category. */
  meanCategoryNs: Record<string, number>;
  /**
   * Kernel ns per context token and per generation request, over the phase's iterations; null when
   * some iteration's count is unknown (an SGLang step without a log line): never a partial sum.
   */
  gpuNsPerContextToken: number | null;
  gpuNsPerGenerationRequest: number | null;
  /** Kernel ns per generation token, when every iteration of the phase counts its generation tokens (vLLM). */
  gpuNsPerGenerationToken?: number | null;
  contextTokens: number;
  generationRequests: number;
  /** Time-weighted GPU metrics over the phase's windows (when sampled). */
  metrics?: Record<string, number | null>;
}

/** Kept importable from here; the aggregate `op.percentile` (analysis/arqueroOps) is the same function. */
export { percentile } from '../math/percentile.js';

/** Column of category `c` in the per-iteration table (prefixed: a category may be named like a field). */
const categoryColumn = (c: string) => `category:${c}`;

/**
 * `iterations --summary`: per-phase aggregates of the per-iteration rows (one arquero rollup per
 * phase, in PHASES order). Means are sum / count in row order, percentiles nearest-rank
 * (`op.percentile`).
 */
export function summarizeByPhase(rows: IterationRow[], categories: string[]): PhaseSummary[] {
  if (rows.length === 0) return [];
  const columns: Record<string, unknown[]> = {
    phaseOrder: rows.map((r) => PHASES.indexOf(r.phase)),
    phase: rows.map((r) => r.phase),
    gpuBusyNs: rows.map((r) => r.gpuBusyNs),
    idleShare: rows.map((r) => (r.wallNs > 0 ? r.gpuIdleNs / r.wallNs : 0)),
    wallNs: rows.map((r) => r.wallNs),
    kernelNs: rows.map((r) => r.kernelNs),
    contextTokens: rows.map((r) => r.contextTokens ?? 0),
    generationRequests: rows.map((r) => r.generationRequests ?? 0),
    generationTokens: rows.map((r) => r.generationTokens ?? 0),
    generationTokensKnown: rows.map((r) => (r.generationTokens != null ? 1 : 0)),
    contextTokensKnown: rows.map((r) => (r.contextTokens != null ? 1 : 0)),
    generationRequestsKnown: rows.map((r) => (r.generationRequests != null ? 1 : 0)),
  };
  const categoryMeans: Record<string, string> = {};
  for (const c of categories) {
    columns[categoryColumn(c)] = rows.map((r) => r.categoryNs[c] ?? 0);
    categoryMeans[categoryColumn(c)] = `op.sum(d[${column(categoryColumn(c))}]) / op.count()`;
  }
  const phases = aq
    .table(columns)
    .filter((d: { phaseOrder: number }) => d.phaseOrder >= 0)
    .groupby('phaseOrder', 'phase')
    .rollup({
      iterations: op.count(),
      meanGpuBusyNs: (d: { gpuBusyNs: number }) => op.sum(d.gpuBusyNs) / op.count(),
      p50GpuBusyNs: (d: { gpuBusyNs: number }) => op.percentile(d.gpuBusyNs, 50),
      p90GpuBusyNs: (d: { gpuBusyNs: number }) => op.percentile(d.gpuBusyNs, 90),
      p99GpuBusyNs: (d: { gpuBusyNs: number }) => op.percentile(d.gpuBusyNs, 99),
      meanIdleShare: (d: { idleShare: number }) => op.sum(d.idleShare) / op.count(),
      p50IdleShare: (d: { idleShare: number }) => op.percentile(d.idleShare, 50),
      p90IdleShare: (d: { idleShare: number }) => op.percentile(d.idleShare, 90),
      p99IdleShare: (d: { idleShare: number }) => op.percentile(d.idleShare, 99),
      meanWallNs: (d: { wallNs: number }) => op.sum(d.wallNs) / op.count(),
      meanKernelNs: (d: { kernelNs: number }) => op.sum(d.kernelNs) / op.count(),
      kernelNs: (d: { kernelNs: number }) => op.sum(d.kernelNs),
      contextTokens: (d: { contextTokens: number }) => op.sum(d.contextTokens),
      generationRequests: (d: { generationRequests: number }) => op.sum(d.generationRequests),
      generationTokens: (d: { generationTokens: number }) => op.sum(d.generationTokens),
      generationTokensKnown: (d: { generationTokensKnown: number }) => op.sum(d.generationTokensKnown),
      contextTokensKnown: (d: { contextTokensKnown: number }) => op.sum(d.contextTokensKnown),
      generationRequestsKnown: (d: { generationRequestsKnown: number }) => op.sum(d.generationRequestsKnown),
      ...categoryMeans,
    })
    .derive({
      gpuNsPerContextToken: (d: { kernelNs: number; contextTokens: number; contextTokensKnown: number; iterations: number }) =>
        d.contextTokens > 0 && d.contextTokensKnown === d.iterations ? d.kernelNs / d.contextTokens : null,
      gpuNsPerGenerationRequest: (d: { kernelNs: number; generationRequests: number; generationRequestsKnown: number; iterations: number }) =>
        d.generationRequests > 0 && d.generationRequestsKnown === d.iterations ? d.kernelNs / d.generationRequests : null,
    })
    .orderby('phaseOrder');
  return (phases.objects() as Record<string, number & Phase>[]).map((p) => ({
    phase: p.phase,
    iterations: p.iterations,
    meanGpuBusyNs: p.meanGpuBusyNs,
    p50GpuBusyNs: p.p50GpuBusyNs,
    p90GpuBusyNs: p.p90GpuBusyNs,
    p99GpuBusyNs: p.p99GpuBusyNs,
    meanIdleShare: p.meanIdleShare,
    p50IdleShare: p.p50IdleShare,
    p90IdleShare: p.p90IdleShare,
    p99IdleShare: p.p99IdleShare,
    meanWallNs: p.meanWallNs,
    meanKernelNs: p.meanKernelNs,
    meanCategoryNs: Object.fromEntries(categories.map((c) => [c, p[categoryColumn(c)]])),
    gpuNsPerContextToken: p.gpuNsPerContextToken,
    gpuNsPerGenerationRequest: p.gpuNsPerGenerationRequest,
    // Per generated token only when every iteration of the phase counts its generation tokens (vLLM).
    ...(p.generationTokensKnown === p.iterations ? { gpuNsPerGenerationToken: p.generationTokens > 0 ? p.kernelNs / p.generationTokens : null } : {}),
    contextTokens: p.contextTokens,
    generationRequests: p.generationRequests,
  }));
}
