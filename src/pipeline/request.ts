import type { KernelNames } from '../analysis/timeline.js';
import type { KernelSummaryOptions } from '../analysis/kernelSummary.js';
import type { CategoryRule } from '../categories/rules.js';
import type { FindingThresholds } from '../findings/finding.js';
import type { IterationSelection } from '../iterations/selection.js';
import type { ParsedIterationLog } from '../logs/logRecords.js';
import type { LayerOptions } from '../layers/types.js';

/**
 * The parts of an export's analysis a caller can ask for. Each is computed at most once; a part
 * pulls in what it is built from (`host` needs `gaps`, `metrics` needs `iterations`, ...), see
 * `resolveParts`.
 */
export type AnalysisPart =
  /** What the export holds (`iterscope info`). */
  | 'info'
  /** `cuda_gpu_kern_sum`. */
  | 'kernels'
  /** `nvtx_sum`. */
  | 'nvtx'
  /** `nvtx_gpu_proj_sum`. */
  | 'nvtxGpu'
  /** Iteration windows, attribution, log join. */
  | 'iterations'
  /** Per-phase statistics of the iterations (`iterations --summary`), with GPU metrics when sampled. */
  | 'phases'
  /** GPU idle gaps and their host causes (with iterations: `idleByCauseNs` on every row). */
  | 'gaps'
  /** Sampled GPU metrics per iteration and phase. */
  | 'metrics'
  /** GC and GIL on the host. */
  | 'host'
  /** Kernel time by category, in iterations and over the capture. */
  | 'categories'
  /** What the numbers cover and every note, in report order. */
  | 'coverage'
  /**
   * Whether the capture can answer: what nsys traced and recorded, its own warnings, the program's
   * output and crash, the processes of a capture without GPU work, graph capture vs serving.
   */
  | 'health'
  /** Per-process figures for the cross-rank view (collective kernels by iteration). */
  | 'rankFigures'
  /**
   * The serving span (start-up left out when it can be told apart) and what the GPU did in it:
   * kernel time and count by category, busy/idle, copies, allocations, the steps' tokens (`engines`).
   */
  | 'servingSpan'
  /** Aten ops per iteration (PyTorch profiler): when the input is a Kineto trace or `torchTrace` is given. */
  | 'pytorchHost'
  /** Which threads held the GIL while each executor thread waited for it. */
  | 'gilHolders'
  /** Memcpy by direction, pageable memory, allocations in the loop. */
  | 'memory'
  /** What to fix first, ranked by recoverable time (`findFindings` over the other parts). */
  | 'findings'
  /** Every GPU op and aten op with its slice columns, in start order (what `trace` writes). */
  | 'timeline'
  /** A few steps at kernel level (the slowest, the median, those the findings cite): the HTML report's timeline. */
  | 'stepTimeline'
  /** Each step split by decoder layer and module kind (`layers`, `iterations --layers`). */
  | 'layers';

export const ANALYSIS_PARTS: readonly AnalysisPart[] = ['info', 'kernels', 'nvtx', 'nvtxGpu', 'iterations', 'phases', 'gaps', 'metrics', 'host', 'categories', 'coverage', 'health', 'rankFigures', 'servingSpan', 'pytorchHost', 'gilHolders', 'memory', 'findings', 'timeline', 'stepTimeline', 'layers'];

/** Everything `iterscope report` shows. */
export const REPORT_PARTS: readonly AnalysisPart[] = ['info', 'kernels', 'nvtx', 'nvtxGpu', 'iterations', 'phases', 'gaps', 'metrics', 'host', 'categories', 'coverage', 'health', 'pytorchHost', 'gilHolders', 'memory', 'findings'];

/**
 * What to analyse and how. Plain data (structured-clone safe): worker threads receive it as it is;
 * category rules travel as rules and are compiled where the analysis runs.
 */
export interface AnalysisRequest {
  parts: readonly AnalysisPart[];
  /** Parsed iteration logs (`--log`), joined to the iterations. */
  logs?: ParsedIterationLog[];
  /** How iterations are found and numbered. */
  selection?: IterationSelection;
  /** Kernel category rules (`--categories`); default: the built-in table. */
  categoryRules?: readonly CategoryRule[];
  /**
   * An export without iteration ranges is an error (`iterations`, `summarize`, `ranks`); otherwise
   * the other parts go on without iterations and `iterationError` says why (`report`, `gaps`).
   */
  requireIterations?: boolean;
  /** `gaps`: gaps at least this long are reported one by one (default 100 us). */
  minGapNs?: number;
  /** `gaps`: only this CUDA device. */
  deviceId?: number;
  /** `kernels`: group by the demangled or short name; add whole-graph launches. */
  kernels?: Pick<KernelSummaryOptions, 'nameBy' | 'includeGraphs'>;
  /** `servingSpan`: add the span's samples (kernel instances: `compare`'s basis without iterations). */
  spanSamples?: boolean;
  /** `rankFigures`: the category holding the collectives (default `communication`). */
  communicationCategory?: string;
  /** `findings`: rule thresholds replacing the defaults (`--thresholds`). */
  findingThresholds?: Partial<FindingThresholds>;
  /** `timeline`: kernel slice names, nsys's short names (default) or the demangled signatures. */
  kernelNames?: KernelNames;
  /** `pytorchHost`: a PyTorch profiler trace of the same run beside an nsys export (`--torch-trace`). */
  torchTrace?: string;
  /**
   * Where the NVTX table is read when the GPU ops are read too: 'auto' (default) in a worker thread
   * for a large table on a machine with a second core, 'background' in a worker thread whatever its
   * size, 'inline' on the calling thread, 'release' on the calling thread and let go before the
   * GPU ops are read, as a table past SHARED_NVTX_ROWS always is (the two are not held at once:
   * less memory, more time). The result is the same; only the time and memory differ.
   */
  nvtxRead?: NvtxReadMode;
  /** `layers`: where layers come from (markers where a step has them, or inferred only) and the outlier bar. */
  layers?: LayerOptions;
}

/** See `AnalysisRequest.nvtxRead`. */
export type NvtxReadMode = 'auto' | 'background' | 'inline' | 'release';

/** Dependencies between parts: what each one is computed from. */
const NEEDS: Partial<Record<AnalysisPart, readonly AnalysisPart[]>> = {
  metrics: ['iterations'],
  phases: ['iterations'],
  host: ['gaps'],
  categories: ['kernels'],
  coverage: ['gaps', 'kernels', 'nvtx', 'categories'],
  rankFigures: ['iterations'],
  // The steps when there are markers; the graph-capture facts (`health`'s launches) when there are none.
  servingSpan: ['iterations', 'health'],
  pytorchHost: ['iterations'],
  layers: ['iterations'],
  gilHolders: ['gaps', 'info'],
  memory: ['gaps'],
  findings: ['info', 'kernels', 'iterations', 'phases', 'metrics', 'gaps', 'host', 'gilHolders', 'memory', 'health'],
  // The steps it draws are those the findings cite.
  stepTimeline: ['iterations', 'gaps', 'findings'],
};

/** The requested parts plus everything they are computed from. */
export function resolveParts(parts: readonly AnalysisPart[]): Set<AnalysisPart> {
  const out = new Set<AnalysisPart>();
  const add = (p: AnalysisPart) => {
    if (out.has(p)) return;
    out.add(p);
    for (const d of NEEDS[p] ?? []) add(d);
  };
  parts.forEach(add);
  return out;
}
