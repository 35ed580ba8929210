import type { ExportMetadata } from '../export/openExport.js';
import type { ExportInfo } from '../analysis/exportInfo.js';
import type { CaptureSettings } from '../load/captureSettings.js';
import type { PytorchHostSide } from '../kineto/pytorchHostSide.js';
import type { KernelSummary } from '../analysis/kernelSummary.js';
import type { NvtxGpuProjection } from '../analysis/nvtxGpuProjection.js';
import type { NvtxSummary } from '../analysis/nvtxSummary.js';
import type { GapAnalysis } from '../gaps/analyzeGaps.js';
import type { GilHolderAnalysis } from '../gaps/gilHolders.js';
import type { MemoryTraffic } from '../analysis/memoryTraffic.js';
import type { IterationAnalysis } from '../iterations/types.js';
import type { PhaseSummary } from '../iterations/summary.js';
import type { ReportLogFile } from '../logs/logRecords.js';
import type { IterationMetricsResult } from '../metrics/iterationMetrics.js';
import type { RankFigures } from '../iterations/rankIterationFigures.js';
import type { CategoryTime } from '../analysis/categoryTime.js';
import type { ReportCoverage } from '../overview/reportCoverage.js';
import type { HostSummary } from '../gaps/hostSummary.js';
import type { AnalysisPart } from './request.js';
import type { Timeline } from '../analysis/timeline.js';
import type { FindingsInput, FindingsResult } from '../findings/finding.js';
import type { CaptureHealth } from '../analysis/captureHealth.js';
import type { ServingSpan } from '../analysis/servingSpan.js';
import type { LayersAnalysis } from '../layers/types.js';
import type { StepTimeline } from '../overview/stepTimeline.js';

export type { ReportLogFile };

/**
 * One export analysed once (`analyzeExport`): every part that was asked for, null (or empty) for
 * the others. Plain data: it crosses to and from worker threads by structured clone.
 */
export interface ExportAnalysis {
  file: string;
  /** The parts computed (the request's and what they are built from). */
  parts: AnalysisPart[];
  /** nsys and export schema versions (META_DATA_EXPORT). */
  metadata: ExportMetadata;
  /** How the capture was set up (always read: a few small tables). */
  capture: CaptureSettings;
  info: ExportInfo | null;
  kernels: KernelSummary | null;
  nvtx: NvtxSummary | null;
  /** NVTX ranges projected onto the GPU (nsys's `nvtx_gpu_proj_sum`). */
  projection: NvtxGpuProjection | null;
  /** Null when not asked for, or when the export has no iteration ranges (`iterationError` says why). */
  iterations: IterationAnalysis | null;
  iterationError: string | null;
  /** `iterations --summary` rows (with GPU metrics when sampled); empty without iterations. */
  phases: PhaseSummary[];
  /** GPU metrics per iteration. */
  metrics: IterationMetricsResult | null;
  gaps: GapAnalysis | null;
  host: HostSummary | null;
  categories: CategoryTime | null;
  coverage: ReportCoverage | null;
  /** Whether the capture can answer at all, and why not (see `CaptureHealth`). */
  health: CaptureHealth | null;
  /** Who held the GIL while each executor thread waited (empty when the GIL was not traced). */
  gilHolders: GilHolderAnalysis[] | null;
  /** Memcpy by direction and pageable memory, allocations in the loop, per iteration. */
  memory: MemoryTraffic | null;
  /** What to fix first, ranked (`findFindings` over this analysis). */
  findings: FindingsResult | null;
  /** Aten ops per iteration and phase (PyTorch profiler): the input is a Kineto trace, or `torchTrace` was given. */
  pytorchHost: PytorchHostSide | null;
  /** Every GPU op and aten op with its slice columns, in start order (`trace`); typed arrays, not for JSON. */
  timeline: Timeline | null;
  /** A few steps at kernel level (the HTML report's timeline); null unless asked for, or without iterations. */
  stepTimeline?: StepTimeline | null;
  /** Per process with iterations: what the cross-rank view needs. */
  rankFigures: RankFigures[] | null;
  /**
   * The serving span and what the GPU did in it; null when not asked for, when the capture holds no
   * GPU work, or when none of its GPU ops has its launch call in the export.
   */
  servingSpan: ServingSpan | null;
  /** Each step split by decoder layer and module kind; absent when not asked for or without iterations. */
  layers?: LayersAnalysis;
  logs: ReportLogFile[];
  /** Wall-clock ms each step took (diagnostics and benchmarks). */
  timingsMs: Record<string, number>;
}

/** What the report renders: an analysis with every report part present. */
export type ReportData = ExportAnalysis & {
  info: ExportInfo;
  kernels: KernelSummary;
  nvtx: NvtxSummary;
  gaps: GapAnalysis;
  host: HostSummary;
  categories: CategoryTime;
  coverage: ReportCoverage;
  health: CaptureHealth;
  gilHolders: GilHolderAnalysis[];
  memory: MemoryTraffic;
  findings: FindingsResult;
};

/** Narrows an analysis to `ReportData` (it was asked for `REPORT_PARTS`). */
export function isReportData(a: ExportAnalysis): a is ReportData {
  return !!(a.info && a.kernels && a.nvtx && a.gaps && a.host && a.categories && a.coverage && a.health && a.gilHolders && a.memory && a.findings);
}

/** The analysis as the findings rules read it: null when a part they rest on was not computed. */
export function findingsInputOf(a: ExportAnalysis): FindingsInput | null {
  if (!a.info || !a.kernels || !a.gaps || !a.host || !a.gilHolders || !a.memory || !a.health) return null;
  return { ...a, info: a.info, kernels: a.kernels, gaps: a.gaps, host: a.host, gilHolders: a.gilHolders, memory: a.memory, health: a.health };
}
