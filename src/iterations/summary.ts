import { aq } from '../math/arqueroOps.js';
import { percentile } from '../math/percentile.js';
import { PHASES, type Phase } from './phase.js';
import type { IterationRow } from './types.js';

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
  /**
   * Attention kernel ns per 1,000 KV tokens over the phase (sum over sum), when every iteration of
   * the phase carries its KV tokens (vLLM's detailed annotation); absent otherwise.
   */
  attentionNsPer1kKvTokens?: number | null;
  /** Time-weighted GPU metrics over the phase's windows (when sampled). */
  metrics?: Record<string, number | null>;
}

/** Kept importable from here; the aggregate `op.percentile` (analysis/arqueroOps) is the same function. */
export { percentile } from '../math/percentile.js';

/** Column of category `c` in the per-iteration table (prefixed: a category may be named like a field). */
const categoryColumn = (c: string) => `category:${c}`;

/**
 * `iterations --summary`: per-phase aggregates of the per-iteration rows, in PHASES order. Means
 * are sum / count in row order, percentiles nearest-rank (`percentile`, what `op.percentile`
 * computes). The rows are aggregated in one pass per phase (`phaseAggregates`): arquero's rollup of
 * ~30 aggregates over every iteration took ~30 ms of a `report` on pytorch-dense-long. Arquero
 * derives the per-token figures on the phases' table and orders it.
 */
export function summarizeByPhase(rows: IterationRow[], categories: string[]): PhaseSummary[] {
  if (rows.length === 0) return [];
  const phases = aq
    .from(phaseAggregates(rows, categories))
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
    ...(p.kvTokensKnown === p.iterations ? { attentionNsPer1kKvTokens: p.kvTokens > 0 && p.attentionKnown ? (p.attentionNs * 1000) / p.kvTokens : null } : {}),
  }));
}

/** One phase's rows aggregated (`phaseAggregates`): the fields `summarizeByPhase` reads, category means under `category:<name>`. */
type PhaseAggregate = Record<string, number | Phase>;

/**
 * Per phase with rows (in PHASES order; rows of no phase are left out): the iteration count, the
 * means and nearest-rank percentiles of GPU busy time and idle share, the means of wall and kernel
 * time and of each category's time, and the sums of kernel time, tokens and requests with how many
 * rows know each count. Every sum in row order from 0, every mean that sum over the count.
 */
export function phaseAggregates(rows: readonly IterationRow[], categories: readonly string[]): PhaseAggregate[] {
  const groups = PHASES.map(() => [] as IterationRow[]);
  for (const r of rows) {
    const k = PHASES.indexOf(r.phase);
    if (k >= 0) groups[k].push(r);
  }
  return groups.flatMap((g, k) => (g.length > 0 ? [aggregatePhase(k, g, categories)] : []));
}

function aggregatePhase(phaseOrder: number, g: readonly IterationRow[], categories: readonly string[]): PhaseAggregate {
  const n = g.length;
  const busy = g.map((r) => r.gpuBusyNs);
  const idle = g.map((r) => (r.wallNs > 0 ? r.gpuIdleNs / r.wallNs : 0));
  const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);
  const kernelNs = sum(g.map((r) => r.kernelNs));
  const out: PhaseAggregate = {
    phaseOrder,
    phase: PHASES[phaseOrder],
    iterations: n,
    meanGpuBusyNs: sum(busy) / n,
    p50GpuBusyNs: percentile(busy, 50),
    p90GpuBusyNs: percentile(busy, 90),
    p99GpuBusyNs: percentile(busy, 99),
    meanIdleShare: sum(idle) / n,
    p50IdleShare: percentile(idle, 50),
    p90IdleShare: percentile(idle, 90),
    p99IdleShare: percentile(idle, 99),
    meanWallNs: sum(g.map((r) => r.wallNs)) / n,
    meanKernelNs: kernelNs / n,
    kernelNs,
    contextTokens: sum(g.map((r) => r.contextTokens ?? 0)),
    generationRequests: sum(g.map((r) => r.generationRequests ?? 0)),
    generationTokens: sum(g.map((r) => r.generationTokens ?? 0)),
    generationTokensKnown: g.filter((r) => r.generationTokens != null).length,
    contextTokensKnown: g.filter((r) => r.contextTokens != null).length,
    generationRequestsKnown: g.filter((r) => r.generationRequests != null).length,
    kvTokens: sum(g.map((r) => r.kvTokens ?? 0)),
    kvTokensKnown: g.filter((r) => r.kvTokens != null).length,
    attentionNs: sum(g.map((r) => r.categoryNs.attention ?? 0)),
    attentionKnown: categories.includes('attention') ? 1 : 0,
  };
  for (const c of categories) out[categoryColumn(c)] = sum(g.map((r) => r.categoryNs[c] ?? 0)) / n;
  return out;
}
