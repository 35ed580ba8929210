/**
 * `iterscope report` as a library: `buildReport(handle, opts)` runs every analysis once,
 * `reportDocument(data)` lays out the sections, `renderReport(data, 'md' | 'html')` writes them.
 */
export { buildReport, projectionNotes } from './buildReport.js';
export { categoryTime, type CategoryTime, type CategoryTotal } from './categoryTime.js';
export { ACTIVITY_METRICS, gpuMetricsChart, gpuTimeByCategoryChart, idleByCauseChart, idleByIterationChart, type ChartDatum, type ReportChart } from './charts.js';
export { reportCoverage, UNCATEGORIZED, type ReportCoverage, type ReportNote } from './coverage.js';
export { fragmentedLabel, reportDocument, type ReportBlock, type ReportDocument, type ReportSection } from './document.js';
export { summarizeHost, type GcSummary, type GilSummary, type GilThreadSummary, type HostSummary } from './hostSummary.js';
export { renderReport, REPORT_FORMATS, REPORT_GENERATOR, type ReportFormat } from './renderReport.js';
export { categoryTable, factsTable, hostTable, nvtxProjectionTable, PHASE_LABELS, phaseMetricsTable, reportIterationsTable, slowestIterations } from './tables.js';
export { DEFAULT_REPORT_LAYOUT, type ReportData, type ReportLayout, type ReportLogFile, type ReportOptions } from './types.js';
