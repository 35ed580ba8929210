import type { ExportHandle } from '../../queries/handle.js';
import { IterationError } from '../errors.js';
import { buildReport } from '../pipeline/buildReport.js';
import type { ReportOptions } from '../pipeline/types.js';
import { summarizeRun, type RunSummary } from '../summary/runSummary.js';
import { digestFindings } from './digest.js';
import { findFindings } from './findFindings.js';

/**
 * A run summary with the run's findings (ids, titles, recoverable time), from one analysis of the
 * export: what `summarize` writes and what `compare` reads from an export.
 */
export function summarizeExportWithFindings(handle: ExportHandle, opts: ReportOptions = {}): RunSummary {
  const data = buildReport(handle, opts);
  if (!data.iterations) throw new IterationError(data.iterationError ?? 'no iterations', handle.path);
  return { ...summarizeRun(handle, data.iterations), findings: digestFindings(findFindings(data)) };
}
