import { PHASES, type IterationRow, type Phase } from './analyze.js';

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
  /** Kernel ns per context token and per generation request, over the phase's iterations. */
  gpuNsPerContextToken: number | null;
  gpuNsPerGenerationRequest: number | null;
  /** Kernel ns per generation token, when every iteration of the phase counts its generation tokens (vLLM). */
  gpuNsPerGenerationToken?: number | null;
  contextTokens: number;
  generationRequests: number;
  /** Time-weighted GPU metrics over the phase's windows (when sampled). */
  metrics?: Record<string, number | null>;
}

/** Nearest-rank percentile (p in 0..100) of values (not modified). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const s = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))];
}

const mean = (v: number[]) => (v.length ? v.reduce((a, b) => a + b, 0) / v.length : 0);

/** `iterations --summary`: per-phase aggregates of the per-iteration rows. */
export function summarizeByPhase(rows: IterationRow[], categories: string[]): PhaseSummary[] {
  const out: PhaseSummary[] = [];
  for (const phase of PHASES) {
    const rs = rows.filter((r) => r.phase === phase);
    if (rs.length === 0) continue;
    const busy = rs.map((r) => r.gpuBusyNs);
    const idleShare = rs.map((r) => (r.wallNs > 0 ? r.gpuIdleNs / r.wallNs : 0));
    const meanCategoryNs: Record<string, number> = {};
    for (const c of categories) meanCategoryNs[c] = mean(rs.map((r) => r.categoryNs[c] ?? 0));
    const kernel = rs.reduce((a, r) => a + r.kernelNs, 0);
    const ctxTokens = rs.reduce((a, r) => a + (r.contextTokens ?? 0), 0);
    const genReqs = rs.reduce((a, r) => a + (r.generationRequests ?? 0), 0);
    const genTokensKnown = rs.every((r) => r.generationTokens != null);
    const genTokens = rs.reduce((a, r) => a + (r.generationTokens ?? 0), 0);
    out.push({
      phase,
      iterations: rs.length,
      meanGpuBusyNs: mean(busy),
      p50GpuBusyNs: percentile(busy, 50),
      p90GpuBusyNs: percentile(busy, 90),
      p99GpuBusyNs: percentile(busy, 99),
      meanIdleShare: mean(idleShare),
      p50IdleShare: percentile(idleShare, 50),
      p90IdleShare: percentile(idleShare, 90),
      p99IdleShare: percentile(idleShare, 99),
      meanWallNs: mean(rs.map((r) => r.wallNs)),
      meanKernelNs: mean(rs.map((r) => r.kernelNs)),
      meanCategoryNs,
      gpuNsPerContextToken: ctxTokens > 0 ? kernel / ctxTokens : null,
      gpuNsPerGenerationRequest: genReqs > 0 ? kernel / genReqs : null,
      ...(genTokensKnown ? { gpuNsPerGenerationToken: genTokens > 0 ? kernel / genTokens : null } : {}),
      contextTokens: ctxTokens,
      generationRequests: genReqs,
    });
  }
  return out;
}
