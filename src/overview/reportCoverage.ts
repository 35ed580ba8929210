import type { KernelSummary } from '../analysis/kernelSummary.js';
import type { NvtxGpuProjection } from '../analysis/nvtxGpuProjection.js';
import type { GapAnalysis } from '../gaps/analyzeGaps.js';
import type { IterationAnalysis } from '../iterations/types.js';
import type { IterationMetricsResult } from '../metrics/iterationMetrics.js';
import type { CategoryTime } from '../analysis/categoryTime.js';

/** The category that catches kernels no rule named (the default table's last rule). */
export const UNCATEGORIZED = 'other';

/** One note of an analysis, with the analysis it came from. */
export interface ReportNote {
  source: 'iterations' | 'gaps' | 'kernels' | 'nvtx' | 'nvtx-gpu' | 'metrics' | 'report';
  text: string;
}

/** How much of the export the numbers account for, and what was left out. */
export interface ReportCoverage {
  /** GPU ops (kernels, memcpy, memset, whole-graph launches) and their summed time. */
  gpuOps: number;
  gpuOpNs: number;
  /** Placed in an iteration by the launching API call's time. */
  placedOps: number;
  placedNs: number;
  placedPercent: number;
  /** Launched before the first or after the last iteration window. */
  outsideNs: number;
  /** No CUDA API row in the export (time-trimmed exports). */
  noRuntimeNs: number;
  /** Ops of processes without iteration ranges. */
  otherProcessNs: number;
  /** Kernel time in iterations that a category rule other than `other` named. */
  categorizedNs: number;
  categorizedPercent: number;
  /** Same over the whole capture's kernels. */
  captureCategorizedPercent: number;
  iterationsFound: number;
  iterationsJoined: number;
  windowsWithoutRecord: number[];
  /** Log records whose iteration is not in the export: unmatched. */
  recordsOutsideCapture: number[];
  logRecords: number;
  logSkippedLines: number;
  labelMismatches: number[];
  /** NVTX projection: GPU ops launched from inside an NVTX range, of all GPU ops it saw (null: no projection). */
  projectionOpsInRanges: number | null;
  projectionOps: number | null;
  /** Every note of every analysis, in report order, without repeats. */
  notes: ReportNote[];
}

const percent = (part: number, whole: number) => (whole > 0 ? (part * 100) / whole : 0);

/** Collects the coverage of the analyses a report ran (no analysis is run here). */
export function reportCoverage(input: {
  iterations: IterationAnalysis | null;
  gaps: GapAnalysis;
  kernels: KernelSummary;
  kernelNotes: string[];
  nvtxNotes: string[];
  projection: NvtxGpuProjection | null;
  projectionNotes: string[];
  metrics: IterationMetricsResult | null;
  categories: CategoryTime;
  extraNotes: ReportNote[];
}): ReportCoverage {
  const it = input.iterations;
  const cov = it?.coverage;
  const other = input.categories.rows.find((r) => r.category === UNCATEGORIZED);
  const categorizedNs = input.categories.iterationKernelNs - (other?.iterationNs ?? 0);
  const captureCategorized = input.categories.captureKernelNs - (other?.captureNs ?? 0);
  const projected = input.projection && input.projection.missingTables.length === 0 ? input.projection.coverage : null;
  const notes: ReportNote[] = [];
  const seen = new Set<string>();
  const add = (source: ReportNote['source'], texts: readonly string[]) => {
    for (const text of texts) {
      if (seen.has(text)) continue;
      seen.add(text);
      notes.push({ source, text });
    }
  };
  add('report', input.extraNotes.filter((n) => n.source === 'report').map((n) => n.text));
  // Iteration notes already include the metrics notes (the pipeline's `iterations` part appends them).
  add('iterations', cov?.notes ?? []);
  add('gaps', input.gaps.notes);
  add('kernels', input.kernelNotes);
  add('nvtx', input.nvtxNotes);
  add('nvtx-gpu', input.projectionNotes);
  if (!it) add('metrics', input.metrics?.notes ?? []);
  return {
    gpuOps: cov?.gpuOps ?? 0,
    gpuOpNs: cov?.gpuOpNs ?? 0,
    placedOps: cov?.placedOps ?? 0,
    placedNs: cov?.placedNs ?? 0,
    placedPercent: percent(cov?.placedNs ?? 0, cov?.gpuOpNs ?? 0),
    outsideNs: cov?.outsideNs ?? 0,
    noRuntimeNs: cov?.noRuntimeNs ?? 0,
    otherProcessNs: cov?.otherProcessNs ?? 0,
    categorizedNs,
    categorizedPercent: percent(categorizedNs, input.categories.iterationKernelNs),
    captureCategorizedPercent: percent(captureCategorized, input.categories.captureKernelNs),
    iterationsFound: it?.iterations.length ?? 0,
    iterationsJoined: cov?.joined ?? 0,
    windowsWithoutRecord: cov?.windowsWithoutRecord ?? [],
    recordsOutsideCapture: cov?.recordsOutsideCapture ?? [],
    logRecords: cov?.logRecords ?? 0,
    logSkippedLines: cov?.logSkippedLines ?? 0,
    labelMismatches: cov?.labelMismatches ?? [],
    projectionOpsInRanges: projected ? projected.gpuOps - projected.gpuOpsOutsideRanges - projected.gpuOpsWithoutApiCall : null,
    projectionOps: projected ? projected.gpuOps : null,
    notes,
  };
}
