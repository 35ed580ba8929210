import type { LoadedExport } from '../load/loadedExport.js';
import { iterationMetrics, phaseMetrics, type IterationMetricsResult } from '../metrics/iterationMetrics.js';
import type { IterationAnalysis } from './analyze.js';
import type { PhaseSummary } from './summary.js';

/**
 * Adds `metrics` (time-weighted SMs Active, SM Issue, Tensor Active, DRAM bandwidth, GR Active,
 * GPC clock) to every iteration when the export sampled GPU metrics; otherwise adds no field and
 * a note saying why.
 */
export function addGpuMetrics(loaded: LoadedExport, analysis: IterationAnalysis): IterationMetricsResult {
  const m = iterationMetrics(loaded, analysis.iterations);
  analysis.coverage.notes.push(...m.notes);
  if (m.available) {
    analysis.metricNames = m.metricNames;
    analysis.iterations.forEach((row, i) => {
      row.metrics = m.perIteration[i] ?? {};
    });
  }
  return m;
}

/** `--summary`: the same metrics per phase, aggregated exactly from the per-iteration sums. */
export function addPhaseMetrics(analysis: IterationAnalysis, phases: PhaseSummary[], m: IterationMetricsResult): void {
  if (!m.available) return;
  const byPhase = phaseMetrics(analysis.iterations, m);
  for (const p of phases) p.metrics = byPhase.get(p.phase) ?? {};
}
