import { withExport } from '../export/openExport.js';
import { loadApiCallColumns } from '../analysis/apiCallColumns.js';
import { loadGpuOpColumns } from '../analysis/gpuOpColumns.js';
import { compileCategoryRules, defaultCategoryClassifier, type CategoryRule } from '../categories/rules.js';
import { analyzeGaps, type GapAnalysis } from '../gaps/analyze.js';
import { analyzeIterations, type IterationAnalysis, type IterationOptions } from '../iterations/analyze.js';
import { addIdleCauses } from '../iterations/idleCauses.js';
import { addGpuMetrics } from '../iterations/gpuMetrics.js';
import { parseIterationRangeSpec } from '../iterations/rangeSpec.js';
import type { ParsedIterationLog } from '../logs/types.js';
import type { IterationMetricsResult } from '../metrics/iterationMetrics.js';
import { summarizeExport, type RunSummary } from '../summary/runSummary.js';
import { rankFiguresFromExport, type RankFigures } from './rankFigures.js';
import { summarizeKernels, type KernelSummary } from '../analysis/kernelSummary.js';
import { describeExport, type ExportInfo } from '../analysis/exportInfo.js';
import { summarizeNvtx, type NvtxSummary } from '../analysis/nvtxSummary.js';
import { projectNvtxOntoGpu, type NvtxGpuProjection } from '../analysis/nvtxGpuProjection.js';
import { metricsForExport, type MetricsCommandResult, type MetricsRequest } from '../metrics/metricsForExport.js';

/**
 * Options of a per-export task. Structured-clone safe (they cross to worker threads): parsed logs
 * are plain data, and what holds RegExps or functions travels as its source (`iterationRange`
 * as typed on the command line, `categoryRules` as the rules) and is compiled in the worker.
 */
export interface TaskOptions {
  logs?: ParsedIterationLog[];
  /** `--iteration-range` text (a name or /regex/). */
  iterationRange?: string;
  firstIter?: number;
  profileRange?: string;
  /** Kernel category rules (default: the built-in table). */
  categoryRules?: CategoryRule[];
  /** `rankFigures`: the category holding the collectives (default `communication`). */
  communicationCategory?: string;
  /** `iterations`: add idleByCauseNs (default true). */
  idleCauses?: boolean;
  /** `gaps`: minimum reported gap and device filter. */
  minGapNs?: number;
  deviceId?: number;
  /** `kernels`: group by the demangled (default) or short name; add whole-graph launches. */
  kernelNameBy?: 'demangled' | 'short';
  includeGraphs?: boolean;
  /** `metrics`: the command's options (its `--log` files are `logs`). */
  metrics?: Omit<MetricsRequest, 'logs'>;
}

/** What each task returns for one export. */
export interface TaskResults {
  /** As `iterscope iterations`: the analysis with idle causes and GPU metrics. */
  iterations: { analysis: IterationAnalysis; metrics: IterationMetricsResult };
  /** As `iterscope gaps`. */
  gaps: GapAnalysis;
  /** What the cross-rank view needs: one entry per process with iterations. */
  rankFigures: RankFigures[];
  /** As `iterscope summarize`. */
  summary: RunSummary;
  /** As `iterscope info`. */
  info: ExportInfo;
  /** As `iterscope kernels`. */
  kernels: KernelSummary;
  /** As `iterscope nvtx`. */
  nvtx: NvtxSummary;
  /** As `iterscope nvtx --gpu`. */
  nvtxGpu: NvtxGpuProjection;
  /** As `iterscope metrics`. */
  metrics: MetricsCommandResult;
}
export type TaskName = keyof TaskResults;
export const TASK_NAMES: readonly TaskName[] = ['iterations', 'gaps', 'rankFigures', 'summary', 'info', 'kernels', 'nvtx', 'nvtxGpu', 'metrics'];

function iterationOptions(opts: TaskOptions): IterationOptions {
  return {
    logs: opts.logs,
    rangeSpec: opts.iterationRange !== undefined ? parseIterationRangeSpec(opts.iterationRange) : undefined,
    firstIter: opts.firstIter,
    profileRange: opts.profileRange,
    classifier: opts.categoryRules ? compileCategoryRules(opts.categoryRules) : defaultCategoryClassifier(),
  };
}

/** Runs one task on one export, in this thread. The worker entry calls this too. */
export function runTask<T extends TaskName>(task: T, file: string, opts: TaskOptions = {}): TaskResults[T] {
  const io = iterationOptions(opts);
  switch (task) {
    case 'iterations':
      return withExport(file, (h) => {
        // As the single-export command: one scan of the GPU ops and API calls serves both analyses.
        const gpuOps = loadGpuOpColumns(h);
        const apiCalls = loadApiCallColumns(h);
        const analysis = analyzeIterations(h, { ...io, gpuOps, apiCalls });
        if (opts.idleCauses !== false) addIdleCauses(h, analysis, { gpuOps, apiCalls });
        return { analysis, metrics: addGpuMetrics(h, analysis) };
      }) as TaskResults[T];
    case 'gaps':
      return withExport(file, (h) => analyzeGaps(h, { minGapNs: opts.minGapNs, deviceId: opts.deviceId, iterationOptions: io })) as TaskResults[T];
    case 'rankFigures':
      return withExport(file, (h) => rankFiguresFromExport(h, { ...io, communicationCategory: opts.communicationCategory })) as TaskResults[T];
    case 'summary':
      return withExport(file, (h) => summarizeExport(h, io)) as TaskResults[T];
    case 'info':
      return withExport(file, describeExport) as TaskResults[T];
    case 'kernels':
      return withExport(file, (h) => summarizeKernels(h, { nameBy: opts.kernelNameBy, includeGraphs: opts.includeGraphs })) as TaskResults[T];
    case 'nvtx':
      return withExport(file, (h) => summarizeNvtx(h)) as TaskResults[T];
    case 'nvtxGpu':
      return withExport(file, (h) => projectNvtxOntoGpu(h)) as TaskResults[T];
    case 'metrics':
      return metricsForExport(file, { ...opts.metrics, logs: opts.logs }) as TaskResults[T];
    default:
      throw new Error(`unknown task ${String(task)}`);
  }
}
