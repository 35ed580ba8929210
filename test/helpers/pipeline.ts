import type { ExportHandle } from '../../queries/handle.js';
import type { GapAnalysis } from '../../src/gaps/analyzeGaps.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import { REPORT_PARTS, type AnalysisRequest } from '../../src/pipeline/request.js';
import { isReportData, type ReportData } from '../../src/pipeline/exportAnalysis.js';

/** The gaps as `iterscope gaps` computes them: the pipeline's iterations (when found) and gaps. */
export function gapsOf(h: ExportHandle, request: Omit<AnalysisRequest, 'parts'> = {}): GapAnalysis {
  return analyzeExport(h, { ...request, parts: ['iterations', 'gaps'] }).gaps!;
}

/** Everything `iterscope report` computes (`REPORT_PARTS`), narrowed to `ReportData`. */
export function reportAnalysis(h: ExportHandle, request: Omit<AnalysisRequest, 'parts'> = {}): ReportData {
  const a = analyzeExport(h, { ...request, parts: REPORT_PARTS });
  if (!isReportData(a)) throw new Error(`${h.path}: the pipeline did not return every report part`);
  return a;
}
