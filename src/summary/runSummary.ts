import type { ExportHandle } from '../../queries/handle.js';
import { readCaptureSettings } from '../analysis/exportInfo.js';
import { summarizeKernels } from '../analysis/kernelSummary.js';
import { summarizeNvtx } from '../analysis/nvtxSummary.js';
import { PYTORCH_FORWARD_STEP } from '../iterations/rangeSpec.js';
import { addIdleCauses } from '../iterations/idleCauses.js';
import { loadGpuOpColumns } from '../analysis/gpuOpColumns.js';
import { loadApiCallColumns } from '../analysis/apiCallColumns.js';
import { analyzeIterations, PHASES, type IterationAnalysis, type IterationOptions, type IterationRow, type Phase } from '../iterations/analyze.js';

import type { FindingDigest } from '../findings/digest.js';

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
 * Per-iteration labels (`[Executor] _forward_step 17: ...`) are unique per iteration, so two runs
 * never share them: fold them into one `[Executor] _forward_step (all iterations)` row.
 */
function collapseIterationLabels(rows: RunSummary['nvtx']): RunSummary['nvtx'] {
  const out = new Map<string, RunSummary['nvtx'][number]>();
  for (const r of rows) {
    const sep = r.range.indexOf(':');
    const text = r.range.slice(sep + 1);
    const range = PYTORCH_FORWARD_STEP.test(text) ? `${r.range.slice(0, sep)}:[Executor] _forward_step (all iterations)` : r.range;
    const key = `${r.style}\u0000${range}`;
    const prev = out.get(key);
    if (prev) {
      prev.totalNs += r.totalNs;
      prev.instances += r.instances;
    } else out.set(key, { ...r, range });
  }
  return [...out.values()].sort((a, b) => b.totalNs - a.totalNs);
}

/** Builds the summary from an iteration analysis (plus kernel and NVTX totals). */
export function summarizeRun(handle: ExportHandle, analysis: IterationAnalysis, version = '0.1.0'): RunSummary {
  const settings = readCaptureSettings(handle);
  const rows = analysis.iterations;
  const phases: RunSummary['phases'] = {};
  for (const p of PHASES) {
    const rs = rows.filter((r) => r.phase === p);
    if (rs.length) phases[p] = phaseFigures(rs, analysis.categories);
  }
  const pr = settings.environment.ENABLE_PERFECT_ROUTER;
  const kernels = summarizeKernels(handle, { includeGraphs: true }).rows.slice(0, 50).map((k) => ({ name: k.name, totalNs: k.total, instances: k.count }));
  const nvtx = collapseIterationLabels(summarizeNvtx(handle).rows.map((r) => ({ range: r.range, style: r.style, totalNs: r.total, instances: r.count }))).slice(0, 50);
  const iters = rows.map((r) => r.iter);
  return {
    schema: SUMMARY_SCHEMA,
    createdBy: `iterscope ${version}`,
    run: {
      file: handle.path,
      productVersion: handle.metadata.productVersion,
      profileStartStop: settings.profileStartStop,
      perfectRouter: pr === undefined ? null : pr === '1' || pr.toLowerCase() === 'true',
      iterationsFound: rows.length,
      iterationsJoined: analysis.coverage.joined,
      firstIter: iters.length ? Math.min(...iters) : null,
      lastIter: iters.length ? Math.max(...iters) : null,
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
    })),
    kernels,
    nvtx,
  };
}

/** Analyses an open export (iterations with their idle causes) and summarises it. */
export function summarizeExport(handle: ExportHandle, opts: IterationOptions = {}): RunSummary {
  const gpuOps = opts.gpuOps ?? loadGpuOpColumns(handle);
  const apiCalls = opts.apiCalls ?? loadApiCallColumns(handle);
  const analysis = analyzeIterations(handle, { ...opts, gpuOps, apiCalls });
  addIdleCauses(handle, analysis, { gpuOps, apiCalls });
  return summarizeRun(handle, analysis);
}
