import type { ExportHandle } from '../../queries/handle.js';
import type { GapAnalysis } from '../../src/gaps/analyze.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import type { AnalysisRequest } from '../../src/pipeline/request.js';

/** The gaps as `iterscope gaps` computes them: the pipeline's iterations (when found) and gaps. */
export function gapsOf(h: ExportHandle, request: Omit<AnalysisRequest, 'parts'> = {}): GapAnalysis {
  return analyzeExport(h, { ...request, parts: ['iterations', 'gaps'] }).gaps!;
}
