import type { ExportInfo } from '../analysis/exportInfo.js';
import type { KernelSummary } from '../analysis/kernelSummary.js';
import type { NvtxGpuProjection } from '../analysis/nvtxGpuProjection.js';
import type { NvtxSummary } from '../analysis/nvtxSummary.js';
import type { CategoryClassifier } from '../categories/rules.js';
import type { GapAnalysis } from '../gaps/analyze.js';
import type { GilHolderAnalysis } from '../gaps/gilHolders.js';
import type { MemoryTraffic } from '../analysis/memoryTraffic.js';
import type { IterationAnalysis } from '../iterations/analyze.js';
import type { IterationRangeSpec } from '../iterations/rangeSpec.js';
import type { PhaseSummary } from '../iterations/summary.js';
import type { LogFormat, ParsedIterationLog } from '../logs/types.js';
import type { IterationMetricsResult } from '../metrics/iterationMetrics.js';
import type { CategoryTime } from './categoryTime.js';
import type { ReportCoverage } from './coverage.js';
import type { HostSummary } from './hostSummary.js';

/** What `buildReport` analyses, and how (the same options as `iterations` and `gaps`). */
export interface ReportOptions {
  /** Parsed iteration logs (`--log`), joined to the iterations. */
  logs?: ParsedIterationLog[];
  /** NVTX range that marks one iteration (`--iteration-range`). */
  rangeSpec?: IterationRangeSpec;
  /** Number unnumbered iteration ranges from N (`--first-iter`). */
  firstIter?: number;
  /** TLLM_PROFILE_START_STOP value to number unnumbered ranges (`--profile-range`). */
  profileRange?: string;
  /** Kernel category rules (`--categories`); default: the built-in table. */
  classifier?: CategoryClassifier;
  /** Gaps of at least this many ns are reported one by one (`--min-gap`); default 100 us. */
  minGapNs?: number;
}

/** How much of each table the document shows. Defaults: `DEFAULT_REPORT_LAYOUT`. */
export interface ReportLayout {
  /** Rows of the top-kernels, top-gaps and NVTX tables. */
  top: number;
  /** Up to this many iterations are listed one by one; above it, only the slowest. */
  iterationRows: number;
  /** Iterations listed (slowest wall time first) when there are more than `iterationRows`. */
  slowest: number;
}

export const DEFAULT_REPORT_LAYOUT: Readonly<ReportLayout> = Object.freeze({ top: 10, iterationRows: 40, slowest: 20 });

/** One `--log` file as the report describes it. */
export interface ReportLogFile {
  file: string;
  records: number;
  skippedLines: number;
  formats: Partial<Record<LogFormat, number>>;
}

/**
 * Everything the report shows, computed once per export: each analysis runs one time and the
 * Markdown and HTML documents are both rendered from this object.
 */
import type { CrossRankView } from '../ranks/crossRank.js';
import type { FindingsResult } from '../findings/types.js';

export interface ReportData {
  file: string;
  info: ExportInfo;
  kernels: KernelSummary;
  nvtx: NvtxSummary;
  /** NVTX ranges projected onto the GPU (nsys's `nvtx_gpu_proj_sum`); null when not available. */
  projection: NvtxGpuProjection | null;
  /** Null when the export has no iteration ranges (`iterationError` says why). */
  iterations: IterationAnalysis | null;
  iterationError: string | null;
  /** `iterations --summary` rows (with GPU metrics when sampled). */
  phases: PhaseSummary[];
  /** GPU metrics per iteration; null without iterations. */
  metrics: IterationMetricsResult | null;
  gaps: GapAnalysis;
  categories: CategoryTime;
  host: HostSummary;
  /** Who held the GIL while each executor thread waited (empty when the GIL was not traced). */
  gilHolders: GilHolderAnalysis[];
  /** Memcpy by direction and pageable memory, allocations in the loop, per iteration. */
  memory: MemoryTraffic;
  coverage: ReportCoverage;
  logs: ReportLogFile[];
  /** Wall-clock ms each analysis took (for `--verbose`-style diagnostics and benchmarks). */
  timingsMs: Record<string, number>;
  /** With several exports (one per rank): the cross-rank view; the other sections are of the first. */
  crossRank?: CrossRankView | null;
  /** What to fix first (`findFindings` over this data); the report computes it when absent. */
  findings?: FindingsResult;
}
