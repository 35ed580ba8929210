import type { ExportHandle } from '../../queries/handle.js';
import { analyzeGaps, idleByCausePerIteration, type GapAnalysis } from '../gaps/analyze.js';
import type { IterationAnalysis } from './analyze.js';
import type { GpuOpColumns } from '../analysis/gpuOpColumns.js';
import type { ApiCallColumns } from '../analysis/apiCallColumns.js';

/**
 * Adds `idleByCauseNs` to every iteration: the idle gaps (>= minGapNs) that start in its window,
 * split by host cause, plus `fragmented` for the shorter gaps between back-to-back work. Gap
 * causes come from `analyzeGaps`, given these iterations so they are not searched again.
 * Returns the gap analysis for callers that also print it.
 */
export function addIdleCauses(handle: ExportHandle, analysis: IterationAnalysis, opts: { minGapNs?: number; gpuOps?: GpuOpColumns; apiCalls?: ApiCallColumns } = {}): GapAnalysis {
  const gaps = analyzeGaps(handle, { iterations: analysis.iterations, minGapNs: opts.minGapNs, gpuOps: opts.gpuOps, apiCalls: opts.apiCalls });
  const byIter = idleByCausePerIteration(gaps, analysis.iterations, { includeFragmented: true });
  for (const row of analysis.iterations) row.idleByCauseNs = byIter.get(row.iter) ?? {};
  return gaps;
}
