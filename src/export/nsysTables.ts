/**
 * Tables whose presence marks a file as an nsys export (at least one, plus StringIds or metadata).
 * nsys writes `StringIds`, `ANALYSIS_FILE` and `ProcessStreams` (the program's output) even when a
 * program exited before any CUDA, NVTX or OS event: such an export is read, and says so.
 */
const NSYS_MARKER_TABLES = [
  'META_DATA_EXPORT',
  'EXPORT_META_DATA',
  'META_DATA_CAPTURE',
  'CUPTI_ACTIVITY_KIND_KERNEL',
  'CUPTI_ACTIVITY_KIND_RUNTIME',
  'NVTX_EVENTS',
  'TARGET_INFO_SESSION_START_TIME',
  'ANALYSIS_DETAILS',
  'ANALYSIS_FILE',
  'ProcessStreams',
  'DIAGNOSTIC_EVENT',
  'TARGET_INFO_GPU',
  'TARGET_INFO_SYSTEM_ENV',
  'PROCESSES',
  'ThreadNames',
];

/** Whether these tables (of an SQLite file) make it an nsys export: a marker table, plus StringIds or metadata. */
export function hasNsysTables(tables: ReadonlySet<string>): boolean {
  return NSYS_MARKER_TABLES.some((t) => tables.has(t)) && (tables.has('StringIds') || tables.has('META_DATA_EXPORT') || tables.has('EXPORT_META_DATA'));
}
