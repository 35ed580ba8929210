import { PHASES } from '../iterations/phase.js';
import type { Engine } from '../iterations/source.js';
import type { PhaseFigures, RunSummary } from '../summary/runSummary.js';
import type { Phase } from '../iterations/phase.js';


/**
 * The field guide's engine table, done per phase: two runs (e.g. TensorRT-LLM vs vLLM of one model
 * and load) side by side. Information, not a gate. "GPU ns" is GPU busy time (the union of the
 * process's GPU work in the iteration windows) throughout, so per-iteration and per-token figures
 * add up. Per-token figures divide ALL of a phase's GPU time by that token kind: in a mixed phase
 * both are upper bounds, not a split.
 */
export interface EngineFigures {
  iterations: number;
  gpuNsPerIteration: number;
  /** null when the phase has no context tokens (or the summary predates token counts). */
  gpuNsPerContextToken: number | null;
  /** Generated tokens: the log's (or label's) generation tokens, else generation requests. */
  gpuNsPerGeneratedToken: number | null;
  /** Fusion shows as fewer, longer kernels. */
  kernelsPerIteration: number | null;
  idleShare: number;
  /** Kernel time by category as a share of the phase's kernel time (0..1). */
  categoryShare: Record<string, number>;
}

export interface EngineSide {
  file: string;
  /** `unknown` for a summary written before engines were recorded, or for `--iteration-range` runs. */
  engine: Engine;
}

export interface EngineComparison {
  base: EngineSide;
  head: EngineSide;
  /** Union of both runs' categories with kernel time, in table order. */
  categories: string[];
  /** `all` first, then each phase that either run has. */
  scopes: { scope: Scope; base: EngineFigures | null; head: EngineFigures | null }[];
}

/**
 * A figure per token (ns, a count, bytes): null when the token count is unknown or 0, never a
 * division by nothing. Shared by `compare`'s engine table and `engines`.
 */
export const perToken = (value: number, tokens: number | null | undefined): number | null => (tokens != null && tokens > 0 ? value / tokens : null);

/** Kernel time by category as a share of all kernel time (0..1), categories with time only. */
export function categoryShares(categoryNs: Record<string, number>, kernelNs: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [c, ns] of Object.entries(categoryNs)) if (ns > 0) out[c] = kernelNs > 0 ? ns / kernelNs : 0;
  return out;
}

export function engineFigures(f: PhaseFigures): EngineFigures {
  const gpuNs = f.meanGpuBusyNs * f.iterations;
  const categoryShare = categoryShares(f.meanCategoryNs, f.meanKernelNs);
  return {
    iterations: f.iterations,
    gpuNsPerIteration: f.meanGpuBusyNs,
    gpuNsPerContextToken: perToken(gpuNs, f.contextTokens),
    gpuNsPerGeneratedToken: perToken(gpuNs, f.generatedTokens),
    kernelsPerIteration: f.meanKernelCount ?? null,
    idleShare: f.idleShare,
    categoryShare,
  };
}

export function compareEngines(base: RunSummary, head: RunSummary): EngineComparison {
  const scopes: EngineComparison['scopes'] = [{ scope: 'all', base: engineFigures(base.overall), head: engineFigures(head.overall) }];
  for (const p of PHASES) {
    const b = base.phases[p];
    const h = head.phases[p];
    if (b || h) scopes.push({ scope: p, base: b ? engineFigures(b) : null, head: h ? engineFigures(h) : null });
  }
  const used = new Set(scopes.flatMap((s) => [...Object.keys(s.base?.categoryShare ?? {}), ...Object.keys(s.head?.categoryShare ?? {})]));
  const categories = [...new Set([...base.categories, ...head.categories])].filter((c) => used.has(c));
  return {
    base: { file: base.run.file, engine: base.run.engine ?? 'unknown' },
    head: { file: head.run.file, engine: head.run.engine ?? 'unknown' },
    categories,
    scopes,
  };
}

export type Scope = 'all' | Phase | 'span';
