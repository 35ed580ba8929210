import { selectActivityPerProcess, selectAnalysisFiles, selectDiagnostics, selectProcessStreams, selectProfilerApiStart, type ProcessActivityTable } from '../../queries/healthTables.js';
import { selectProcesses } from '../../queries/processes.js';
import { allRows } from '../../queries/run.js';
import type { LoadedExport } from './loadedExport.js';

/**
 * The small tables capture health reads: nsys's diagnostics, the program's output streams, which
 * event tables hold rows, and per process what it did. Health is read beside every analysis, from
 * tables none of them needs: a damaged one is left out, never an error.
 */

/** Whether a table is there with the columns a health query reads. */
function readable(loaded: LoadedExport, table: string, columns: readonly string[]): boolean {
  return loaded.hasTable(table) && columns.every((c) => loaded.hasColumn(table, c));
}

/** One `DIAGNOSTIC_EVENT` row as read (its severity label when the export has the enum table). */
export interface DiagnosticRow {
  timestamp: unknown;
  severity: unknown;
  severityLabel?: string | null;
  text: unknown;
  pid: number;
}

/** nsys's warnings and errors, in time order ([] without a readable table). */
export function diagnosticRows(loaded: LoadedExport): DiagnosticRow[] {
  if (!readable(loaded, 'DIAGNOSTIC_EVENT', ['timestamp', 'severity', 'text', 'globalPid'])) return [];
  return allRows(loaded.handle, selectDiagnostics(loaded.handle)) as DiagnosticRow[];
}

/** One output stream as read: the process, the stream file's name and its whole text. */
export interface OutputStreamRow {
  pid: number;
  file: unknown;
  content: unknown;
}

/** The profiled programs' stdout/stderr, as nsys stored them (`ProcessStreams`, else `ANALYSIS_FILE`). */
export function outputStreamRows(loaded: LoadedExport): OutputStreamRow[] {
  const strings = readable(loaded, 'StringIds', ['id', 'value']);
  if (strings && readable(loaded, 'ProcessStreams', ['globalPid', 'filenameId', 'contentId'])) return allRows(loaded.handle, selectProcessStreams(loaded.handle));
  if (readable(loaded, 'ANALYSIS_FILE', ['filename', 'globalPid']) && (strings || !loaded.hasColumn('ANALYSIS_FILE', 'contentId'))) return allRows(loaded.handle, selectAnalysisFiles(loaded.handle));
  return [];
}

/** Which kinds of events the export holds at all (one b-tree lookup per table). */
export interface RecordedActivity {
  kernels: boolean;
  memcpys: boolean;
  memsets: boolean;
  graphRows: boolean;
  cudaCalls: boolean;
  nvtx: boolean;
  osrt: boolean;
  cpuSamples: boolean;
  schedEvents: boolean;
}

export function recordedActivity(loaded: LoadedExport): RecordedActivity {
  const has = (table: string) => loaded.rowBound(table) > 0;
  return {
    kernels: has('CUPTI_ACTIVITY_KIND_KERNEL'),
    memcpys: has('CUPTI_ACTIVITY_KIND_MEMCPY'),
    memsets: has('CUPTI_ACTIVITY_KIND_MEMSET'),
    graphRows: has('CUPTI_ACTIVITY_KIND_GRAPH_TRACE'),
    cudaCalls: has('CUPTI_ACTIVITY_KIND_RUNTIME'),
    nvtx: has('NVTX_EVENTS'),
    osrt: has('OSRT_API'),
    cpuSamples: has('COMPOSITE_EVENTS'),
    schedEvents: has('SCHED_EVENTS'),
  };
}

/** Per process, how many rows of an activity table it has and on how many threads. */
export interface ProcessActivityRow {
  pid: number;
  events: number;
  threads: number;
}

/** `table`'s rows per process ([] without a readable table). */
export function activityPerProcess(loaded: LoadedExport, table: ProcessActivityTable): ProcessActivityRow[] {
  if (!readable(loaded, table, ['globalTid'])) return [];
  return allRows(loaded.handle, selectActivityPerProcess(loaded.handle, table));
}

/** `PROCESSES` (pid, name) when readable (it lists the whole machine's processes: for names only). */
export function processNames(loaded: LoadedExport): { pid: number | bigint | null; name: string | null }[] {
  if (!readable(loaded, 'PROCESSES', ['globalPid', 'pid', 'name'])) return [];
  return allRows(loaded.handle, selectProcesses(loaded.handle)) as { pid: number | bigint | null; name: string | null }[];
}

/** Whether nsys recorded that collection started at the program's profiler API call (a `DIAGNOSTIC_EVENT` line). */
export function profilerApiStarted(loaded: LoadedExport): boolean {
  if (!readable(loaded, 'DIAGNOSTIC_EVENT', ['text', 'timestamp'])) return false;
  return allRows(loaded.handle, selectProfilerApiStart(loaded.handle)).length > 0;
}
