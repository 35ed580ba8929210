import type { ExportHandle } from '../../queries/handle.js';
import { PYTORCH_FORWARD_STEP } from '../iterations/rangeSpec.js';
import { PHASES, type IterationRow, type Phase } from '../iterations/analyze.js';
import type { Engine, IterationSourceId } from '../iterations/source.js';
import { VLLM_EXECUTE_STEP, VLLM_EXECUTE_STEP_OLD } from '../iterations/sources/vllm.js';
import { analyzeExport } from '../pipeline/analyzeExport.js';
import type { AnalysisPart, AnalysisRequest } from '../pipeline/request.js';
import type { ExportAnalysis } from '../pipeline/types.js';

import { digestFindings, type FindingDigest } from '../findings/digest.js';

/** Bumped when a field changes meaning; `compare` refuses summaries of another major version. */
export const SUMMARY_SCHEMA = 'iterscope.summary/1';

/** Mean per-iteration figures of a set of iterations (a phase, or all). */
export interface PhaseFigures {
  iterations: number;
  meanWallNs: number;
  meanGpuBusyNs: number;
  meanGpuIdleNs: number;
  /** sum(idle) / sum(wall) over the set. */
  idleShare: number;
  meanKernelNs: number;
  meanCategoryNs: Record<string, number>;
  meanMemcpyNs: number;
  /** Mean idle ns per iteration by host cause (present when gaps were analysed). */
  meanIdleByCauseNs?: Record<string, number>;
  /** Kernels launched per iteration (engine comparison: fewer, longer kernels = fusion). */
  meanKernelCount?: number;
  /** Context tokens over the set (iterations whose count is unknown add 0). */
  contextTokens?: number;
  /** Generated tokens over the set: generation tokens, else generation requests (one token each without speculative decoding). */
  generatedTokens?: number;
}

export interface IterationFigures {
  iter: number;
  phase: Phase;
  wallNs: number;
  gpuBusyNs: number;
  gpuIdleNs: number;
  kernelNs: number;
  categoryNs: Record<string, number>;
  contextRequests: number | null;
  contextTokens: number | null;
  generationRequests: number | null;
  generationTokens?: number | null;
  kernelCount?: number;
}

/** A compact, versioned digest of one run: what `compare` needs, small enough to keep in git. */
export interface RunSummary {
  schema: typeof SUMMARY_SCHEMA;
  createdBy: string;
  run: {
    file: string;
    productVersion: string | null;
    profileStartStop: string | null;
    /** ENABLE_PERFECT_ROUTER from the captured environment, when recorded. */
    perfectRouter: boolean | null;
    iterationsFound: number;
    iterationsJoined: number;
    firstIter: number | null;
    lastIter: number | null;
    /** The engine whose iteration markers numbered the run, and the source (absent in older summaries). */
    engine?: Engine;
    iterationSource?: IterationSourceId;
  };
  categories: string[];
  overall: PhaseFigures;
  phases: Partial<Record<Phase, PhaseFigures>>;
  iterations: IterationFigures[];
  /** Top kernels by total time (`cuda_gpu_kern_sum`), at most 50. */
  kernels: { name: string; totalNs: number; instances: number }[];
  /** NVTX ranges by total CPU time (`nvtx_sum`), at most 50. */
  nvtx: { range: string; style: string; totalNs: number; instances: number }[];
  /** The run's findings (`iterscope findings`), when the summary was made with them; absent in older summaries. */
  findings?: FindingDigest[];
}

const sum = (v: number[]) => v.reduce((a, b) => a + b, 0);

export function phaseFigures(rows: IterationRow[], categories: string[]): PhaseFigures {
  const n = rows.length || 1;
  const wall = sum(rows.map((r) => r.wallNs));
  const idle = sum(rows.map((r) => r.gpuIdleNs));
  const meanCategoryNs: Record<string, number> = {};
  for (const c of categories) meanCategoryNs[c] = sum(rows.map((r) => r.categoryNs[c] ?? 0)) / n;
  return {
    iterations: rows.length,
    meanWallNs: wall / n,
    meanGpuBusyNs: sum(rows.map((r) => r.gpuBusyNs)) / n,
    meanGpuIdleNs: idle / n,
    idleShare: wall > 0 ? idle / wall : 0,
    meanKernelNs: sum(rows.map((r) => r.kernelNs)) / n,
    meanCategoryNs,
    meanMemcpyNs: sum(rows.map((r) => r.memcpyNs)) / n,
    meanKernelCount: sum(rows.map((r) => r.kernelCount)) / n,
    contextTokens: sum(rows.map((r) => r.contextTokens ?? 0)),
    generatedTokens: sum(rows.map((r) => r.generationTokens ?? r.generationRequests ?? 0)),
    ...(rows.some((r) => r.idleByCauseNs) ? { meanIdleByCauseNs: meanByKey(rows.map((r) => r.idleByCauseNs ?? {}), n) } : {}),
  };
}

/** Mean of each key over `n` records (missing keys count as 0). */
function meanByKey(records: Record<string, number>[], n: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of records) for (const [k, v] of Object.entries(r)) out[k] = (out[k] ?? 0) + v;
  for (const k of Object.keys(out)) out[k] /= n;
  return out;
}

/**
 * Per-iteration labels (`[Executor] _forward_step 17: ...`, vLLM's `execute_context_1(512)_...`)
 * name one iteration or one batch shape, so two runs rarely share them: fold them into one
 * `... (all iterations)` row per engine.
 */
function collapseIterationLabels(rows: RunSummary['nvtx']): RunSummary['nvtx'] {
  const out = new Map<string, RunSummary['nvtx'][number]>();
  for (const r of rows) {
    const sep = r.range.indexOf(':');
    const text = r.range.slice(sep + 1);
    const range = PYTORCH_FORWARD_STEP.test(text)
      ? `${r.range.slice(0, sep)}:[Executor] _forward_step (all iterations)`
      : VLLM_EXECUTE_STEP.test(text) || VLLM_EXECUTE_STEP_OLD.test(text)
        ? `${r.range.slice(0, sep)}:execute_* (all iterations)`
        : r.range;
    const key = `${r.style}\u0000${range}`;
    const prev = out.get(key);
    if (prev) {
      prev.totalNs += r.totalNs;
      prev.instances += r.instances;
    } else out.set(key, { ...r, range });
  }
  return [...out.values()].sort((a, b) => b.totalNs - a.totalNs);
}

/** What a summary is built from. */
export const SUMMARY_PARTS: readonly AnalysisPart[] = ['iterations', 'gaps', 'kernels', 'nvtx', 'findings'];

/** The request `summarizeExport` makes: the summary's parts, kernels with whole-graph launches. */
export function summaryRequest(request: Omit<AnalysisRequest, 'parts'> = {}): AnalysisRequest {
  return { ...request, parts: SUMMARY_PARTS, kernels: { includeGraphs: true }, requireIterations: true };
}

/** Builds the summary from an analysis of `SUMMARY_PARTS` (iterations with their idle causes, kernel and NVTX totals). */
export function summarizeRun(a: ExportAnalysis, version = '0.1.0'): RunSummary {
  if (!a.iterations || !a.kernels || !a.nvtx) throw new Error(`summarizeRun needs the parts ${SUMMARY_PARTS.join(', ')} (got ${a.parts.join(', ')})`);
  const analysis = a.iterations;
  const settings = a.capture;
  const rows = analysis.iterations;
  const phases: RunSummary['phases'] = {};
  for (const p of PHASES) {
    const rs = rows.filter((r) => r.phase === p);
    if (rs.length) phases[p] = phaseFigures(rs, analysis.categories);
  }
  const pr = settings.environment.ENABLE_PERFECT_ROUTER;
  const kernels = a.kernels.rows.slice(0, 50).map((k) => ({ name: k.name, totalNs: k.total, instances: k.count }));
  const nvtx = collapseIterationLabels(a.nvtx.rows.map((r) => ({ range: r.range, style: r.style, totalNs: r.total, instances: r.count }))).slice(0, 50);
  const iters = rows.map((r) => r.iter);
  return {
    schema: SUMMARY_SCHEMA,
    createdBy: `iterscope ${version}`,
    run: {
      file: a.file,
      productVersion: a.metadata.productVersion,
      profileStartStop: settings.profileStartStop,
      perfectRouter: pr === undefined ? null : pr === '1' || pr.toLowerCase() === 'true',
      iterationsFound: rows.length,
      iterationsJoined: analysis.coverage.joined,
      firstIter: iters.length ? Math.min(...iters) : null,
      lastIter: iters.length ? Math.max(...iters) : null,
      engine: analysis.coverage.source.engine,
      iterationSource: analysis.coverage.source.id,
    },
    categories: analysis.categories,
    overall: phaseFigures(rows, analysis.categories),
    phases,
    iterations: rows.map((r) => ({
      iter: r.iter,
      phase: r.phase,
      wallNs: r.wallNs,
      gpuBusyNs: r.gpuBusyNs,
      gpuIdleNs: r.gpuIdleNs,
      kernelNs: r.kernelNs,
      categoryNs: Object.fromEntries(Object.entries(r.categoryNs).filter(([, v]) => v > 0)),
      contextRequests: r.contextRequests,
      contextTokens: r.contextTokens,
      generationRequests: r.generationRequests,
      generationTokens: r.generationTokens,
      kernelCount: r.kernelCount,
    })),
    kernels,
    nvtx,
    ...(a.findings ? { findings: digestFindings(a.findings) } : {}),
  };
}

/** Analyses an open export (iterations with their idle causes, kernels, NVTX) and summarises it. */
export function summarizeExport(handle: ExportHandle, request: Omit<AnalysisRequest, 'parts'> = {}): RunSummary {
  return summarizeRun(analyzeExport(handle, summaryRequest(request)));
}
