import type { ExportHandle } from '../export/openExport.js';
import { aq, column, op } from '../math/arqueroOps.js';
import { PYTORCH_FORWARD_STEP } from '../iterations/rangeSpec.js';
import { PHASES, type Phase } from '../iterations/phase.js';
import type { IterationRow } from '../iterations/types.js';
import { captureFactsOf, gateSamplesOf, type CaptureFacts, type GateBasis, type GateSamples } from './gateSamples.js';
import type { Engine, IterationSourceId } from '../iterations/source.js';
import { VLLM_EXECUTE_STEP, VLLM_EXECUTE_STEP_OLD } from '../iterations/sources/vllm.js';
import { isSglangStepSpan } from '../iterations/sglangSteps.js';
import { analyzeExport } from '../pipeline/analyzeExport.js';
import type { AnalysisPart, AnalysisRequest } from '../pipeline/request.js';
import type { ExportAnalysis } from '../pipeline/exportAnalysis.js';

import { digestFindings, type FindingDigest } from '../findings/digest.js';
import { EmptyCaptureError } from '../errors.js';

/** Bumped when a field changes meaning; `compare` refuses summaries of another major version. */
export const SUMMARY_SCHEMA = 'iterscope.summary/2';

/** Per-iteration rows kept in a summary (for `merge`) up to this many iterations: a baseline stays bounded. */
export const MAX_ITERATION_ROWS = 256;

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
  /** Context tokens over the set; absent when some iteration's count is unknown (never a partial sum). */
  contextTokens?: number;
  /**
   * Generated tokens over the set: generation tokens, else generation requests (one token each
   * without speculative decoding); absent when some iteration has neither.
   */
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
  /** What the numbers can be compared on, and the capture facts checked before any delta. */
  basis: GateBasis;
  capture: CaptureFacts;
  /** The samples of every gated metric, sketched (bounded). */
  gate: GateSamples;
  /** Iterations left out of `iterations` (more than MAX_ITERATION_ROWS). */
  iterationRowsOmitted: number;
}

/** Column of category `c` in the per-iteration table (prefixed: a category may be named like a field). */
const categoryColumn = (c: string) => `category:${c}`;

/** Means per iteration of a set of rows: one arquero rollup; sums in row order, divided by the row count (1 when empty). */
export function phaseFigures(rows: IterationRow[], categories: string[]): PhaseFigures {
  const n = rows.length || 1;
  const columns: Record<string, unknown[]> = {
    wallNs: rows.map((r) => r.wallNs),
    gpuBusyNs: rows.map((r) => r.gpuBusyNs),
    gpuIdleNs: rows.map((r) => r.gpuIdleNs),
    kernelNs: rows.map((r) => r.kernelNs),
    memcpyNs: rows.map((r) => r.memcpyNs),
    kernelCount: rows.map((r) => r.kernelCount),
    contextTokens: rows.map((r) => r.contextTokens ?? 0),
    generatedTokens: rows.map((r) => r.generationTokens ?? r.generationRequests ?? 0),
  };
  const categorySums: Record<string, string> = {};
  for (const c of categories) {
    columns[categoryColumn(c)] = rows.map((r) => r.categoryNs[c] ?? 0);
    categorySums[categoryColumn(c)] = `op.sum(d[${column(categoryColumn(c))}])`;
  }
  // An empty set sums to 0 (arquero's sum of no values is undefined).
  const [t] = aq
    .table(columns)
    .rollup({
      wallNs: op.sum('wallNs'),
      gpuBusyNs: op.sum('gpuBusyNs'),
      gpuIdleNs: op.sum('gpuIdleNs'),
      kernelNs: op.sum('kernelNs'),
      memcpyNs: op.sum('memcpyNs'),
      kernelCount: op.sum('kernelCount'),
      contextTokens: op.sum('contextTokens'),
      generatedTokens: op.sum('generatedTokens'),
      ...categorySums,
    })
    .objects() as Record<string, number | undefined>[];
  const total = (name: string) => t[name] ?? 0;
  const wall = total('wallNs');
  const idle = total('gpuIdleNs');
  return {
    iterations: rows.length,
    meanWallNs: wall / n,
    meanGpuBusyNs: total('gpuBusyNs') / n,
    meanGpuIdleNs: idle / n,
    idleShare: wall > 0 ? idle / wall : 0,
    meanKernelNs: total('kernelNs') / n,
    meanCategoryNs: Object.fromEntries(categories.map((c) => [c, total(categoryColumn(c)) / n])),
    meanMemcpyNs: total('memcpyNs') / n,
    meanKernelCount: total('kernelCount') / n,
    ...(rows.every((r) => r.contextTokens != null) ? { contextTokens: total('contextTokens') } : {}),
    ...(rows.every((r) => r.generationTokens != null || r.generationRequests != null) ? { generatedTokens: total('generatedTokens') } : {}),
    ...(rows.some((r) => r.idleByCauseNs) ? { meanIdleByCauseNs: meanIdleByCause(rows, n) } : {}),
  };
}

/**
 * Mean idle ns per iteration by cause over `n` iterations (a cause missing from an iteration counts
 * as 0): the rows' records as one long (cause, ns) table, summed by cause in order of first appearance.
 */
function meanIdleByCause(rows: IterationRow[], n: number): Record<string, number> {
  const cause: string[] = [];
  const ns: number[] = [];
  for (const r of rows) {
    for (const [k, v] of Object.entries(r.idleByCauseNs ?? {})) {
      cause.push(k);
      ns.push(v);
    }
  }
  const byCause = aq
    .table({ cause, ns })
    .groupby('cause')
    .rollup({ ns: op.sum('ns') })
    .params({ n })
    .derive({ ns: (d: { ns: number }, $: { n: number }) => d.ns / $.n });
  return Object.fromEntries((byCause.objects() as { cause: string; ns: number }[]).map((r) => [r.cause, r.ns]));
}

/**
 * Per-iteration labels (`[Executor] _forward_step 17: ...`, vLLM's `execute_context_1(512)_...`,
 * SGLang's `step[EXTEND bs=1 toks=768]`)
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
        : isSglangStepSpan(text)
          ? `${r.range.slice(0, sep)}:step[...] (all steps)`
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
export const SUMMARY_PARTS: readonly AnalysisPart[] = ['info', 'iterations', 'gaps', 'kernels', 'nvtx', 'servingSpan', 'findings'];

/** The request `summarizeExport` makes: the summary's parts, kernels with whole-graph launches. */
export function summaryRequest(request: Omit<AnalysisRequest, 'parts'> = {}): AnalysisRequest {
  // Iterations when the capture has markers; the serving span's samples always (any basis). An
  // iteration range or numbering asked for by name must be found: never a silent other basis.
  const asked = request.selection?.rangeSpec !== undefined || request.selection?.firstIter !== undefined || !!request.selection?.profileRanges?.length;
  // The layer split only when asked for (`--layers`): a summary without it is as before.
  return { ...request, parts: request.layers ? [...SUMMARY_PARTS, 'layers'] : SUMMARY_PARTS, kernels: { includeGraphs: true }, requireIterations: asked, spanSamples: true };
}

/** Builds the summary from an analysis of `SUMMARY_PARTS` (iterations with their idle causes, kernel and NVTX totals). */
export function summarizeRun(a: ExportAnalysis, version = '0.1.0', tokens: SummaryTokens | null = null): RunSummary {
  if (!a.kernels || !a.nvtx || !a.info) throw new Error(`summarizeRun needs the parts ${SUMMARY_PARTS.join(', ')} (got ${a.parts.join(', ')})`);
  const noGpuWork = a.health?.noGpuWork ?? (a.servingSpan ? null : 'no GPU work could be placed in a serving span');
  if (noGpuWork) throw new EmptyCaptureError(a.file, noGpuWork);
  const analysis = a.iterations;
  // Without iterations: no rows; the categories the serving span's kernels fall in.
  const categories = analysis?.categories ?? Object.keys(a.servingSpan?.categoryNs ?? {});
  const settings = a.capture;
  const rows = analysis?.iterations ?? [];
  const phases: RunSummary['phases'] = {};
  for (const p of PHASES) {
    const rs = rows.filter((r) => r.phase === p);
    if (rs.length) phases[p] = phaseFigures(rs, categories);
  }
  const pr = settings.environment.ENABLE_PERFECT_ROUTER;
  const kernels = a.kernels.rows.slice(0, 50).map((k) => ({ name: k.name, totalNs: k.total, instances: k.count }));
  const nvtx = collapseIterationLabels(a.nvtx.rows.map((r) => ({ range: r.range, style: r.style, totalNs: r.total, instances: r.count }))).slice(0, 50);
  const iters = rows.map((r) => r.iter);
  const gate = gateSamplesOf(a, tokens);
  return {
    schema: SUMMARY_SCHEMA,
    createdBy: `iterscope ${version}`,
    run: {
      file: a.file,
      productVersion: a.metadata.productVersion,
      profileStartStop: settings.profileStartStop,
      perfectRouter: pr === undefined ? null : pr === '1' || pr.toLowerCase() === 'true',
      iterationsFound: rows.length,
      iterationsJoined: analysis?.coverage.joined ?? 0,
      firstIter: iters.length ? Math.min(...iters) : null,
      lastIter: iters.length ? Math.max(...iters) : null,
      ...(analysis ? { engine: analysis.coverage.source.engine, iterationSource: analysis.coverage.source.id } : {}),
    },
    categories,
    overall: phaseFigures(rows, categories),
    phases,
    iterations: rows.slice(0, rows.length > MAX_ITERATION_ROWS ? 0 : rows.length).map((r) => ({
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
    basis: gate.basis,
    capture: captureFactsOf(a),
    gate,
    iterationRowsOmitted: rows.length > MAX_ITERATION_ROWS ? rows.length : 0,
  };
}

/** A generated-token count given for the run (`--tokens`, `--benchmark`), and where it came from. */
export interface SummaryTokens {
  count: number;
  source: string;
}


/** Analyses an open export (iterations with their idle causes, kernels, NVTX) and summarises it. */
export function summarizeExport(handle: ExportHandle, request: Omit<AnalysisRequest, 'parts'> = {}, tokens: SummaryTokens | null = null): RunSummary {
  try {
    return summarizeRun(analyzeExport(handle, summaryRequest(request)), '0.1.0', tokens);
  } catch (err) {
    // An empty capture is never a baseline (nor a passing head): one line, exit 2.
    throw err instanceof EmptyCaptureError ? err.withConsequence('nothing to summarize') : err;
  }
}
