/** The one analysis of an export: `analyzeExport(handle, request)` and what it returns. */
export { analyzeExport, type AnalysisProgress } from './analyzeExport.js';
export type { StepCount } from './stepProgress.js';
export { ANALYSIS_PARTS, REPORT_PARTS, resolveParts, type AnalysisPart, type AnalysisRequest } from './request.js';
export { isReportData, type ExportAnalysis, type ReportData, type ReportLogFile } from './exportAnalysis.js';
export { metricsForExport, parseMetricsRequest, type MetricsCommandResult, type MetricsRequest } from './metricsForExport.js';
