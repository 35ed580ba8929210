import { withExport } from '../export/openExport.js';
import type { ExportInfo } from '../analysis/exportInfo.js';
import type { CaptureHealth } from '../analysis/captureHealth.js';
import type { KernelSummary } from '../analysis/kernelSummary.js';
import type { NvtxGpuProjection } from '../analysis/nvtxGpuProjection.js';
import type { NvtxSummary } from '../analysis/nvtxSummary.js';
import type { GapAnalysis } from '../gaps/analyzeGaps.js';
import type { IterationAnalysis } from '../iterations/types.js';
import type { PhaseSummary } from '../iterations/summary.js';
import type { IterationMetricsResult } from '../metrics/iterationMetrics.js';
import { metricsForExport, type MetricsCommandResult, type MetricsRequest } from '../pipeline/metricsForExport.js';
import { analyzeExport } from '../pipeline/analyzeExport.js';
import type { AnalysisPart, AnalysisRequest } from '../pipeline/request.js';
import type { ExportAnalysis } from '../pipeline/exportAnalysis.js';
import { summarizeRun, summaryRequest, type RunSummary } from '../summary/runSummary.js';
import type { RankFigures } from './rankFigures.js';
import type { FindingsResult } from '../findings/finding.js';
import { ENGINE_CAPTURE_PARTS, engineCaptureOf, type EngineCapture } from '../summary/engineCapture.js';

/**
 * Options of a per-export task: the pipeline's request without its parts (the task names them).
 * Structured-clone safe: they cross to worker threads.
 */
export interface TaskOptions extends Omit<AnalysisRequest, 'parts'> {
  /** `iterations`: add idleByCauseNs (default true). */
  idleCauses?: boolean;
  /** `iterations`: the per-phase summary too (default true; `[]` without it). */
  phases?: boolean;
  /** `metrics`: the command's options (its `--log` files are `logs`). */
  metrics?: Omit<MetricsRequest, 'logs'>;
}

/** What each task returns for one export. */
export interface TaskResults {
  /** As `iterscope iterations`: the analysis with idle causes and GPU metrics. */
  iterations: { analysis: IterationAnalysis; metrics: IterationMetricsResult; phases: PhaseSummary[] };
  /** As `iterscope gaps`. */
  gaps: GapAnalysis;
  /** What the cross-rank view needs: one entry per process with iterations. */
  rankFigures: RankFigures[];
  /** As `iterscope summarize`. */
  summary: RunSummary;
  /** As `iterscope info`. */
  /** As `iterscope info`: what the export holds and what the capture can answer. */
  info: ExportInfo & { health: CaptureHealth | null };
  /** As `iterscope kernels`. */
  kernels: KernelSummary;
  /** As `iterscope nvtx`. */
  nvtx: NvtxSummary;
  /** As `iterscope nvtx --gpu`. */
  nvtxGpu: NvtxGpuProjection;
  /** As `iterscope metrics`. */
  metrics: MetricsCommandResult;
  /** What `findings` and `report` need of each further export (one per rank): its own findings and its cross-rank figures. */
  rankFindings: { findings: FindingsResult; rankFigures: RankFigures[] };
  /** One row's worth of `iterscope engines`: the serving span, the engine, the health. */
  engines: EngineCapture;
}
export type TaskName = keyof TaskResults;

/** Each pipeline task: the parts it asks for, whether iterations must exist, and what it returns. */
interface PipelineTask<T> {
  parts: (opts: TaskOptions) => AnalysisPart[];
  requireIterations: boolean;
  pick: (a: ExportAnalysis) => T;
}

const PIPELINE_TASKS: { [K in Exclude<TaskName, 'metrics' | 'summary'>]: PipelineTask<TaskResults[K]> } = {
  iterations: {
    parts: (o) => ['iterations', ...(o.phases === false ? [] : (['phases'] as const)), ...(o.idleCauses === false ? [] : (['gaps'] as const)), 'metrics'],
    requireIterations: true,
    pick: (a) => ({ analysis: a.iterations!, metrics: a.metrics!, phases: a.phases }),
  },
  gaps: { parts: () => ['iterations', 'gaps'], requireIterations: false, pick: (a) => a.gaps! },
  rankFigures: { parts: () => ['rankFigures'], requireIterations: true, pick: (a) => a.rankFigures! },
  rankFindings: { parts: () => ['findings', 'rankFigures'], requireIterations: true, pick: (a) => ({ findings: a.findings!, rankFigures: a.rankFigures! }) },
  info: { parts: () => ['info', 'health'], requireIterations: false, pick: (a) => ({ ...a.info!, health: a.health }) },
  kernels: { parts: () => ['kernels'], requireIterations: false, pick: (a) => a.kernels! },
  nvtx: { parts: () => ['nvtx'], requireIterations: false, pick: (a) => a.nvtx! },
  nvtxGpu: { parts: () => ['nvtxGpu'], requireIterations: false, pick: (a) => a.projection! },
  engines: { parts: () => [...ENGINE_CAPTURE_PARTS], requireIterations: false, pick: engineCaptureOf },
};

/** Runs one task on one export, in this thread: the pipeline, then the part the task returns. The worker entry calls this too. */
export function runTask<T extends TaskName>(task: T, file: string, opts: TaskOptions = {}): TaskResults[T] {
  const { idleCauses: _i, phases: _p, metrics: _m, ...request } = opts;
  if (task === 'metrics') return metricsForExport(file, { ...opts.metrics, logs: opts.logs }) as TaskResults[T];
  if (task === 'summary') return withExport(file, (h) => summarizeRun(analyzeExport(h, summaryRequest(request)))) as TaskResults[T];
  const t = PIPELINE_TASKS[task as Exclude<TaskName, 'metrics' | 'summary'>] as PipelineTask<TaskResults[T]> | undefined;
  if (!t) throw new Error(`unknown task ${String(task)}`);
  return withExport(file, (h) => t.pick(analyzeExport(h, { ...request, parts: t.parts(opts), requireIterations: t.requireIterations })));
}
