/**
 * The one analysis of an export: `buildReport(handle, opts)` runs every analysis once and returns
 * the data every presentation renders.
 */
export { buildReport, projectionNotes } from './buildReport.js';
export { categoryTime, type CategoryTime, type CategoryTotal } from './categoryTime.js';
export { reportCoverage, UNCATEGORIZED, type ReportCoverage, type ReportNote } from './coverage.js';
export { summarizeHost, type GcSummary, type GilSummary, type GilThreadSummary, type HostSummary } from './hostSummary.js';
export { DEFAULT_REPORT_LAYOUT, type ReportData, type ReportLayout, type ReportLogFile, type ReportOptions } from './types.js';
