import type { ExportHandle } from '../../queries/handle.js';
import { describeExport } from '../analysis/exportInfo.js';
import { summarizeKernels } from '../analysis/kernelSummary.js';
import { projectNvtxOntoGpu, type NvtxGpuProjection } from '../analysis/nvtxGpuProjection.js';
import { summarizeNvtx } from '../analysis/nvtxSummary.js';
import { loadGpuOpColumns, type GpuOpColumns } from '../analysis/gpuOpColumns.js';
import { loadApiCallColumns, type ApiCallColumns } from '../analysis/apiCallColumns.js';
import { defaultCategoryClassifier } from '../categories/rules.js';
import { IterationError } from '../errors.js';
import { analyzeGaps } from '../gaps/analyze.js';
import { findGilHolders } from '../gaps/gilHolders.js';
import { analyzeMemoryTraffic } from '../analysis/memoryTraffic.js';
import { analyzeIterations, type IterationAnalysis } from '../iterations/analyze.js';
import { addGpuMetrics, addPhaseMetrics } from '../iterations/gpuMetrics.js';
import { addIdleCauses } from '../iterations/idleCauses.js';
import { summarizeByPhase, type PhaseSummary } from '../iterations/summary.js';
import type { IterationMetricsResult } from '../metrics/iterationMetrics.js';
import { kernelSummaryTable } from '../../reports/kernelsReport.js';
import { nvtxSummaryTable } from '../../reports/nvtxReport.js';
import { categoryTime } from './categoryTime.js';
import { reportCoverage, type ReportNote } from './coverage.js';
import { summarizeHost } from './hostSummary.js';
import type { ReportData, ReportOptions } from './types.js';

/** What the NVTX GPU projection could not see, as one-line notes. */
export function projectionNotes(p: NvtxGpuProjection | null): string[] {
  if (!p) return [];
  if (p.missingTables.length) return [`skipped: the export has no ${p.missingTables.join(', ')}`];
  const c = p.coverage;
  const out: string[] = [];
  if (c.gpuOps) out.push(`${c.gpuOps - c.gpuOpsOutsideRanges - c.gpuOpsWithoutApiCall} of ${c.gpuOps} GPU ops launched inside an NVTX range`);
  if (c.gpuOpsWithoutApiCall) out.push(`${c.gpuOpsWithoutApiCall} GPU ops have no CUDA API row and are not projected`);
  if (c.graphTraceRowsIgnored) out.push(`${c.graphTraceRowsIgnored} whole-graph launches are not projected (as in nsys)`);
  if (c.crossThreadRanges) out.push(`${c.crossThreadRanges} start/end ranges ended on another thread and are left out (as in nsys)`);
  return out;
}

/**
 * Runs every analysis the report shows, each exactly once, on an open export:
 * `describeExport`, `summarizeKernels`, `summarizeNvtx`, `projectNvtxOntoGpu`,
 * `analyzeIterations` + `addIdleCauses` (whose gap analysis is the report's gap analysis) +
 * `addGpuMetrics`, `summarizeByPhase`, and the GC/GIL summary. With the same options, the numbers
 * equal what `iterations`, `gaps`, `kernels` and `nvtx` print.
 *
 * An export without iteration ranges still gets a report (kernels, gaps, NVTX), with the reason
 * in `iterationError` and in the notes.
 */
export function buildReport(handle: ExportHandle, opts: ReportOptions = {}): ReportData {
  const timingsMs: Record<string, number> = {};
  const timed = <T>(name: string, fn: () => T): T => {
    const t0 = performance.now();
    try {
      return fn();
    } finally {
      timingsMs[name] = Math.round(performance.now() - t0);
    }
  };
  const classifier = opts.classifier ?? defaultCategoryClassifier();
  const extraNotes: ReportNote[] = [];

  const info = timed('info', () => describeExport(handle));
  const kernels = timed('kernels', () => summarizeKernels(handle));
  const nvtx = timed('nvtx', () => summarizeNvtx(handle));
  const projection = timed('nvtxGpu', () => projectNvtxOntoGpu(handle));

  // The GPU ops and API calls, read once for the iterations and the gaps (as `iterations` does),
  // and let go once the gaps are found: what follows does not need them.
  let gpuOps: GpuOpColumns | undefined = loadGpuOpColumns(handle);
  let apiCalls: ApiCallColumns | undefined = loadApiCallColumns(handle);
  let iterations: IterationAnalysis | null = null;
  let iterationError: string | null = null;
  try {
    iterations = timed('iterations', () =>
      analyzeIterations(handle, { logs: opts.logs, rangeSpec: opts.rangeSpec, firstIter: opts.firstIter, profileRange: opts.profileRange, classifier, gpuOps, apiCalls }),
    );
  } catch (err) {
    if (!(err instanceof IterationError)) throw err;
    iterationError = err.message.replace(`${handle.path}: `, '');
    extraNotes.push({ source: 'report', text: `no iterations: ${iterationError}; the report has no per-iteration sections` });
  }
  const gaps = timed('gaps', () =>
    iterations ? addIdleCauses(handle, iterations, { minGapNs: opts.minGapNs, gpuOps, apiCalls }) : analyzeGaps(handle, { iterations: null, minGapNs: opts.minGapNs, gpuOps, apiCalls }),
  );
  gpuOps = undefined;
  apiCalls = undefined;
  let metrics: IterationMetricsResult | null = null;
  let phases: PhaseSummary[] = [];
  if (iterations) {
    const it = iterations;
    metrics = timed('metrics', () => addGpuMetrics(handle, it));
    phases = summarizeByPhase(it.iterations, it.categories);
    addPhaseMetrics(it, phases, metrics);
  }
  const host = timed('host', () => summarizeHost(handle, gaps, iterations?.iterations, info.nvtxDomains));
  const gilHolders = timed('gilHolders', () => findGilHolders(handle, gaps, info.nvtxDomains));
  const gpuSpan = gaps.devices.length ? { startNs: Math.min(...gaps.devices.map((d) => d.spanStartNs)), endNs: Math.max(...gaps.devices.map((d) => d.spanEndNs)) } : null;
  const memory = timed('memory', () => analyzeMemoryTraffic(handle, iterations?.iterations ?? [], gpuSpan));
  const categories = categoryTime(iterations, kernels, classifier);
  const projNotes = projectionNotes(projection);
  const coverage = reportCoverage({
    iterations,
    gaps,
    kernels,
    kernelNotes: kernelSummaryTable(kernels).notes ?? [],
    nvtxNotes: nvtxSummaryTable(nvtx).notes ?? [],
    projection,
    projectionNotes: projNotes,
    metrics,
    categories,
    extraNotes,
  });
  return {
    file: handle.path,
    info,
    kernels,
    nvtx,
    projection,
    iterations,
    iterationError,
    phases,
    metrics,
    gaps,
    categories,
    host,
    gilHolders,
    memory,
    coverage,
    logs: (opts.logs ?? []).map((l) => ({ file: l.file, records: l.records.length, skippedLines: l.skippedLines, formats: l.formats })),
    timingsMs,
  };
}
