import { selectGraphTraces } from '../../queries/graphTrace.js';
import { selectKernelsNamed, selectLaunchesOfKernelsNamed } from '../../queries/kernelLaunches.js';
import { loadKernelNames, selectKernelDurations, type KernelQueryOptions } from '../../queries/kernelEvents.js';
import { forEachRow, iterateQuery } from '../../queries/run.js';
import { countAllRows } from '../../queries/validRows.js';
import { NON_INTEGER_NAME_ID, noteExcludedRows } from '../export/excludedRows.js';
import type { LoadedExport } from './loadedExport.js';

export type { KernelQueryOptions };

/**
 * The kernels' durations by name id (`nameBy`, filters), by query, for when the GPU-op columns
 * are not read (or cannot answer: short names, filters). Rows with unusable times, and rows whose
 * name is no integer id, are left out and, unfiltered, noted (all rows less those read). Returns
 * the rows kept.
 */
export function forEachKernelDuration(loaded: LoadedExport, opts: KernelQueryOptions, filtered: boolean, visit: (nameId: number | null, duration: number) => void): number {
  // A name that is not an integer id (text, a fraction: an edited export) is no name: left out as
  // the loaded GPU ops leave it out (gpuOpColumns.ts), and counted, here in JS (no second scan).
  let wrongName = 0;
  const read = forEachRow(loaded.handle, selectKernelDurations(loaded.handle, opts), (nameId: number | null, duration: number) => {
    if (nameId !== null && (nameId | 0) !== nameId) wrongName++;
    else visit(nameId, duration);
  });
  if (!filtered) {
    noteExcludedRows(loaded.handle, 'CUPTI_ACTIVITY_KIND_KERNEL', wrongName, NON_INTEGER_NAME_ID);
    noteExcludedRows(loaded.handle, 'CUPTI_ACTIVITY_KIND_KERNEL', countAllRows(loaded.handle, 'CUPTI_ACTIVITY_KIND_KERNEL') - read);
  }
  return read - wrongName;
}

/** Each whole-graph launch (`CUPTI_ACTIVITY_KIND_GRAPH_TRACE`, usable times) matching the filters. */
export function forEachGraphLaunch(loaded: LoadedExport, opts: KernelQueryOptions, visit: (graphId: number | null, durationNs: number) => void): void {
  for (const g of iterateQuery(loaded.handle, selectGraphTraces(loaded.handle, opts))) visit(g.graphId, g.end - g.start);
}

/** The demangled names of the export's kernels by string id (read once). */
export function kernelNames(loaded: LoadedExport): ReadonlyMap<number, string> {
  return loaded.cached('kernelNames', () => loadKernelNames(loaded.handle));
}

/** Visits the launch calls (pid, correlation id, call start) of the kernels whose name id is one of `nameIds`. */
export function forEachLaunchOfKernelsNamed(loaded: LoadedExport, nameIds: readonly number[], visit: (pid: number, corr: number, start: number) => void): void {
  forEachRow(loaded.handle, selectLaunchesOfKernelsNamed(loaded.handle, nameIds), visit);
}

/** Visits the kernels (start, end, correlation id, pid) whose name id is one of `nameIds`. */
export function forEachKernelNamed(loaded: LoadedExport, nameIds: readonly number[], visit: (start: number, end: number, corr: number | null, pid: number) => void): void {
  forEachRow(loaded.handle, selectKernelsNamed(loaded.handle, nameIds), visit);
}
