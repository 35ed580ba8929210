import { selectGraphTraceCount } from '../../queries/graphTrace.js';
import { selectIrregularLaunchId, selectNvtxLabelParts, selectProjectionCalls, selectProjectionOps, selectProjectionRanges } from '../../queries/nvtxProjection.js';
import { allRows, forEachRow } from '../../queries/run.js';
import { countAllRows, isValidInterval } from '../../queries/validRows.js';
import type { ApiCallColumns } from './apiCallColumns.js';
import { noteExcludedRows } from '../export/excludedRows.js';
import type { GpuOpColumns } from './gpuOpColumns.js';
import type { LoadedExport } from './loadedExport.js';
import type { LaunchIds } from './launchIds.js';
import { foldColumnsIntoCalls, foldLaunchingCalls, foldOpsIntoCalls, type LaunchedCalls } from './launchedCalls.js';
import type { LaunchSource } from './launchedCalls.js';

/**
 * What the NVTX GPU projection (`nsys stats -r nvtx_gpu_proj_sum`) reads beyond the NVTX columns:
 * the whole-graph rows it leaves out, the ranges and labels when the columns cannot be used, and
 * the API calls and GPU ops, from the loaded columns when they hold exactly the rows its queries
 * would read, else by those queries.
 */

/** The GPU-op tables the projection reads (kernels, memcpys, memsets: not whole-graph rows, as nsys). */
export const PROJECTION_OP_TABLES = ['CUPTI_ACTIVITY_KIND_KERNEL', 'CUPTI_ACTIVITY_KIND_MEMCPY', 'CUPTI_ACTIVITY_KIND_MEMSET'] as const;
export type ProjectionOpTable = (typeof PROJECTION_OP_TABLES)[number];

/** Whole-graph rows (of process `pid` when given): nsys does not project them. */
export function graphTraceRows(loaded: LoadedExport, pid: number | undefined): number {
  let n = 0;
  if (loaded.hasTable('CUPTI_ACTIVITY_KIND_GRAPH_TRACE')) forEachRow(loaded.handle, selectGraphTraceCount(loaded.handle, { pid }), (c: number) => (n = c));
  return n;
}

/** Visits every NVTX range with usable times by query: rowId, start, end, hi, lo, eventType, `sameThread`. */
export function forEachProjectionRange(
  loaded: LoadedExport,
  visit: (rowId: number, start: number | null, end: number | null, hi: number | null, lo: number | null, eventType: number, sameThread: number) => void,
): void {
  const hasEndTid = loaded.hasColumn('NVTX_EVENTS', 'endGlobalTid');
  forEachRow(loaded.handle, selectProjectionRanges(loaded.handle, { hasEndGlobalTid: hasEndTid }), visit);
}

/** Visits what labels the given NVTX rows: rowId, domainId, pid, textId, text. */
export function forEachNvtxLabelPart(loaded: LoadedExport, rowIds: Iterable<number>, visit: (rowId: number, domainId: number | null, pid: number, textId: number | null, text: string | null) => void): void {
  forEachRow(loaded.handle, selectNvtxLabelParts(loaded.handle, rowIds), visit);
}

/**
 * The projection's API calls with their GPU work: from the loaded columns when they are read and
 * hold exactly what the queries would (`upper`: the NVTX rows' bits above the PID, null when they
 * differ); else from the worker that read them meanwhile (`LoadedExport.launchesFromBackground`),
 * else by the queries (of process `pid` when given).
 */
export function launchedCallsOf(loaded: LoadedExport, pid: number | undefined, opTables: readonly ProjectionOpTable[], upper: number | null): LaunchedCalls {
  const gpuOps = loaded.loadedGpuOps();
  const apiCalls = loaded.loadedApiCalls();
  const fromColumns = gpuOps && apiCalls && pid === undefined ? columnLaunchedCalls(loaded, gpuOps, apiCalls, upper, opTables) : null;
  if (fromColumns) return fromColumns;
  return (pid === undefined ? loaded.launchesFromBackground() : undefined) ?? foldOpsIntoCalls(queriedLaunches(loaded, pid, opTables));
}

/** Every API call with its GPU work, by the projection's queries. */
export function queriedLaunchedCalls(loaded: LoadedExport): LaunchedCalls {
  return foldOpsIntoCalls(queriedLaunches(loaded, undefined, PROJECTION_OP_TABLES.filter((t) => loaded.hasTable(t))));
}

/**
 * The calls that launched GPU work, by the same queries, ops read first (`foldLaunchingCalls`): what
 * the launches worker computes, `keepCallsWithGpuWork(queriedLaunchedCalls(loaded))` without
 * holding the other calls. Its rows left out are noted ops first: the worker puts the API calls'
 * note first again (`callsFirst`).
 */
export function queriedLaunchingCalls(loaded: LoadedExport): LaunchedCalls {
  return foldLaunchingCalls(queriedLaunches(loaded, undefined, PROJECTION_OP_TABLES.filter((t) => loaded.hasTable(t))));
}

/**
 * The projection's own queries of CUDA_ACTIVITY_KIND_RUNTIME and the GPU-op tables. Rows with
 * unusable times are left out and noted (src/export/excludedRows.ts), as the GPU-op and API-call columns
 * leave them out: tested here as they are read, so the count costs no scan of its own.
 */
function queriedLaunches(loaded: LoadedExport, pid: number | undefined, opTables: readonly ProjectionOpTable[]): LaunchSource {
  const handle = loaded.handle;
  return {
    // max(rowid): a b-tree lookup, at least the row count: no doubling slack on millions.
    callCapacity: loaded.rowBound('CUPTI_ACTIVITY_KIND_RUNTIME'),
    eachCall: (fn) => {
      const times = timeCheck(loaded, 'CUPTI_ACTIVITY_KIND_RUNTIME');
      forEachRow(handle, selectProjectionCalls(handle, { pid }), (hi: number, lo: number, start: unknown, end: unknown, corr: number) => {
        if (times.usable(start, end)) fn(hi, lo, start as number, end as number, corr);
      });
      times.note();
    },
    eachOp: (fn) => {
      for (const table of opTables) {
        const times = timeCheck(loaded, table);
        forEachRow(handle, selectProjectionOps(handle, table, { pid }), (hi: number | null, corr: number | null, start: unknown, end: unknown) => {
          if (times.usable(start, end)) fn(hi, corr, start as number, end as number);
        });
        times.note();
      }
    },
  };
}

/** Tests rows' times as they are read (`isValidInterval`), counting the unusable ones; `note` notes them as rows of `table`. */
function timeCheck(loaded: LoadedExport, table: string): { usable: (start: unknown, end: unknown) => boolean; note: () => void } {
  let invalid = 0;
  return {
    usable: (start, end) => {
      if (isValidInterval(start, end)) return true;
      invalid++;
      return false;
    },
    note: () => noteExcludedRows(loaded.handle, table, invalid),
  };
}

/**
 * The calls with their GPU work from the loaded columns (`foldColumnsIntoCalls`), when the columns
 * hold exactly what the queries would read: every row of the runtime and GPU-op tables with
 * usable times kept (no backtrace rows; the columns' loaders left out and noted the others, as
 * `queriedLaunches` does), and every globalTid/globalPid sharing the NVTX rows' bits above the PID
 * (`upper`), with a globalPid thread part of 0 (so `hi` is `upper * 2^24 + pid`). Null otherwise
 * (the caller queries).
 */
function columnLaunchedCalls(loaded: LoadedExport, gpuOps: GpuOpColumns, apiCalls: ApiCallColumns, upper: number | null, opTables: readonly ProjectionOpTable[]): LaunchedCalls | null {
  if (upper === null || !columnsHoldEveryRow(loaded, gpuOps, apiCalls, opTables) || !everyLaunchIdRegular(loaded, upper, opTables, gpuOps.launchIds, apiCalls.launchIds)) return null;
  return foldColumnsIntoCalls(gpuOps, apiCalls, loaded.apiCallIndex(), upper * 16777216);
}

/** Whether the columns hold every row of the runtime and op tables with usable times (and counted the others). */
function columnsHoldEveryRow(loaded: LoadedExport, gpuOps: GpuOpColumns, apiCalls: ApiCallColumns, opTables: readonly ProjectionOpTable[]): boolean {
  const handle = loaded.handle;
  const invalidOps = gpuOps.invalidRows;
  if (apiCalls.backtraceRows !== 0 || !invalidOps) return false;
  if (!handle.hasTable('CUPTI_ACTIVITY_KIND_RUNTIME') || apiCalls.count + apiCalls.invalidRows !== countAllRows(handle, 'CUPTI_ACTIVITY_KIND_RUNTIME')) return false;
  const perKind = opsPerKind(gpuOps);
  for (const [k, table] of PROJECTION_OP_TABLES.entries()) {
    const present = opTables.includes(table);
    if (perKind[k] + invalidOps[k] !== (present ? countAllRows(handle, table) : 0)) return false;
  }
  return true;
}

/**
 * The ops of each kind in the columns: from the row counts their scan kept (`tableRows`: the rows
 * of each kind's table, usable or not) when it went through every row, else counted.
 */
function opsPerKind(gpuOps: GpuOpColumns): number[] {
  const { tableRows, invalidRows } = gpuOps;
  if (tableRows && invalidRows) return tableRows.map((n, k) => n - invalidRows[k]);
  const perKind = [0, 0, 0, 0];
  for (let i = 0; i < gpuOps.count; i++) perKind[gpuOps.kind[i]]++;
  return perKind;
}

/**
 * No runtime or GPU-op row with a NULL id, other bits above the PID than `upper`, or (GPU ops) a
 * thread part. Ids the columns checked as they were read (`launchIds`; the row counts were matched
 * above) take no second scan.
 */
function everyLaunchIdRegular(loaded: LoadedExport, upper: number, opTables: readonly ProjectionOpTable[], opIds?: LaunchIds, callIds?: LaunchIds): boolean {
  const handle = loaded.handle;
  const regular = (ids: LaunchIds) => !ids.irregular && (ids.upper === null || ids.upper === upper);
  if (callIds ? !regular(callIds) : allRows(handle, selectIrregularLaunchId(handle, 'CUPTI_ACTIVITY_KIND_RUNTIME', upper)).length > 0) return false;
  if (opIds) return regular(opIds);
  return opTables.every((t) => allRows(handle, selectIrregularLaunchId(handle, t, upper)).length === 0);
}
