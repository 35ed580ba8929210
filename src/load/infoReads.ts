import { selectActivitySpan, selectApiCallerPids, selectDeviceIds, selectGraphNodeKernel, selectKernelPids } from '../../queries/capture.js';
import { GPU_OP_SOURCES } from '../../queries/gpuOps.js';
import { selectGpus } from '../../queries/gpus.js';
import { selectNvtxRangeWithText } from '../../queries/nvtxEvents.js';
import { selectNvtxInfoRows, selectNvtxRangeCountsByDomain } from '../../queries/nvtxDomains.js';
import { selectProcesses } from '../../queries/processes.js';
import { allRows, forEachRow } from '../../queries/run.js';
import { readSessionStartEpochNs, selectAnalysisDetails } from '../../queries/session.js';
import { selectThreads } from '../../queries/threads.js';
import { countAllRows, isValidNvtxTimes } from '../../queries/validRows.js';
import type { LoadedExport } from './loadedExport.js';
import { hasRangeRowMatching, holdingEveryRow, isNvtxRange } from './nvtxEventColumns.js';
import { DomainCreates, knownNvtxDomains } from './nvtxReads.js';
import { domainKey, keysDomainExactly } from './domainKeys.js';

/**
 * The small tables `info` (and a few parts) read: session start, GPUs, threads, processes, row
 * counts, and the distinct devices and processes of the activity tables when the columns are not
 * read. Each a query or two over small tables or indexes.
 */

/** `TARGET_INFO_SESSION_START_TIME.utcEpochNs` (beyond 2^53, hence bigint); null when absent or not an integer. Read once. */
export function sessionStartEpochNs(loaded: LoadedExport): bigint | null {
  return loaded.cached('sessionStart', () => readSessionStartEpochNs(loaded.handle));
}

/** The `ANALYSIS_DETAILS` row (64-bit values as bigint), or undefined without the table. Read once. */
export function analysisDetails(loaded: LoadedExport): { duration: unknown } | undefined {
  if (!loaded.hasTable('ANALYSIS_DETAILS')) return undefined;
  return loaded.cached('analysisDetails', () => allRows(loaded.handle, selectAnalysisDetails(loaded.handle), { safeIntegers: true })[0]);
}

/** `TARGET_INFO_GPU` rows, by id ([] without the table). */
export function gpuRows(loaded: LoadedExport) {
  return loaded.hasTable('TARGET_INFO_GPU') ? allRows(loaded.handle, selectGpus(loaded.handle)) : [];
}

/** Every row of `table` (one of ours; a b-tree count, made once per open export). */
export function rowCount(loaded: LoadedExport, table: string): number {
  return countAllRows(loaded.handle, table);
}

/** The GPU-op tables (kernels, memcpys, memsets, whole-graph launches). */
export const GPU_OP_TABLES: readonly string[] = GPU_OP_SOURCES.map((s) => s.table);

/** Distinct `deviceId`s over the GPU-op tables. */
export function activeDevices(loaded: LoadedExport): Set<number> {
  const devices = new Set<number>();
  for (const t of GPU_OP_TABLES) {
    if (!loaded.hasTable(t)) continue;
    for (const r of allRows(loaded.handle, selectDeviceIds(loaded.handle, t))) devices.add(r.d);
  }
  return devices;
}

/** PIDs that called the CUDA API or ran kernels. */
export function cudaProcesses(loaded: LoadedExport): Set<number> {
  const pids = new Set<number>();
  if (loaded.hasTable('CUPTI_ACTIVITY_KIND_RUNTIME')) for (const r of allRows(loaded.handle, selectApiCallerPids(loaded.handle))) pids.add(r.p);
  if (loaded.hasTable('CUPTI_ACTIVITY_KIND_KERNEL')) for (const r of allRows(loaded.handle, selectKernelPids(loaded.handle))) pids.add(r.p);
  return pids;
}

/** `ThreadNames` rows (pid, tid, name) in table order ([] without the table). */
export function threadRows(loaded: LoadedExport): { pid: number; tid: number; name: string | null }[] {
  return loaded.hasTable('ThreadNames') ? allRows(loaded.handle, selectThreads(loaded.handle)) : [];
}

/** `PROCESSES` rows (pid, name), by pid ([] without the table). */
export function processRows(loaded: LoadedExport): { pid: number | bigint | null; name: string | null }[] {
  return loaded.hasTable('PROCESSES') ? (allRows(loaded.handle, selectProcesses(loaded.handle)) as { pid: number | bigint | null; name: string | null }[]) : [];
}

/** NVTX ranges per (domain, process), in (pid, domainId) order, by an integer-only query. */
export function nvtxRangeCountsByDomain(loaded: LoadedExport): NvtxRangesOfDomain[] {
  return allRows(loaded.handle, selectNvtxRangeCountsByDomain(loaded.handle));
}

/** One (domain, process) pair's NVTX ranges (`nvtxRangeCountsByDomain`). */
export interface NvtxRangesOfDomain {
  domainId: number;
  pid: number;
  ranges: number;
}

/**
 * What `info` needs of NVTX_EVENTS when the NVTX columns are not read, from one scan of the table:
 * a GROUP BY of the ranges sorts every range row (~0.5 s of pytorch-dense-long's 848k), and the
 * span and the row count were a scan each besides.
 */
export interface NvtxInfoFacts {
  /** Every row of the table. */
  rows: number;
  /**
   * The ranges per (domain, process), by `domainKey`, as the NVTX summary counts them
   * (`NvtxRangesByDomain`); null when some range row's pid is NULL or its domain is not an integer
   * in [0, 2^29) (a damaged export, or a key the number could not hold: the query then groups them).
   */
  rangesByDomain: ReadonlyMap<number, number> | null;
  /** First start and last end (start when open) of the rows with usable times (`validNvtxSql`), as `activitySpan`. */
  start: number | null;
  end: number | null;
  /** The domains' names, as `nvtxDomains` reads them (the earliest DomainCreate row with usable times names its domain). */
  domainNames: ReadonlyMap<number, string>;
}

/** `NvtxInfoFacts`, read once per export (null without the table). */
export function nvtxInfoFacts(loaded: LoadedExport): NvtxInfoFacts | null {
  if (!loaded.hasTable('NVTX_EVENTS')) return null;
  return loaded.cached('nvtxInfoFacts', () => scanNvtxInfoFacts(loaded));
}

function scanNvtxInfoFacts(loaded: LoadedExport): NvtxInfoFacts {
  const ranges = new Map<number, number>();
  let exact = true;
  let start = Infinity;
  let end = -Infinity;
  const creates = new DomainCreates();
  const rows = forEachRow(loaded.handle, selectNvtxInfoRows(loaded.handle), (et: number, domainId: unknown, pid: number | null, s: unknown, e: unknown, textId: number | null, text: string | null) => {
    if (isValidNvtxTimes(s, e)) {
      if ((s as number) < start) start = s as number;
      const last = e === null ? (s as number) : (e as number);
      if (last > end) end = last;
      if (et === 75) creates.add(domainKey(domainId as number, pid as number), s as number, textId, text);
    }
    if (!isNvtxRange(et)) return;
    if (!keysDomainExactly(domainId, pid)) {
      exact = false;
      return;
    }
    const key = domainKey(domainId as number, pid!);
    ranges.set(key, (ranges.get(key) ?? 0) + 1);
  });
  const any = start !== Infinity;
  const domainNames = creates.names(loaded);
  knownNvtxDomains(loaded, domainNames);
  return { rows, rangesByDomain: exact ? ranges : null, start: any ? start : null, end: any ? end : null, domainNames };
}

/**
 * Whether some NVTX range has this text (inline or registered): from the NVTX columns when they
 * are read and hold every row (no part scans NVTX_EVENTS again), else by a query.
 */
export function hasNvtxRangeWithText(loaded: LoadedExport, text: string): boolean {
  if (!loaded.hasTable('NVTX_EVENTS')) return false;
  const cols = holdingEveryRow(loaded.sharedNvtx());
  if (cols) return hasRangeRowMatching(cols, (t) => t === text);
  return allRows(loaded.handle, selectNvtxRangeWithText(loaded.handle, text, loaded.hasTable('StringIds'))).length > 0;
}

/** Whether some kernel ran as a CUDA-graph node (node-level graph trace). */
export function hasGraphNodeKernel(loaded: LoadedExport): boolean {
  if (!loaded.hasTable('CUPTI_ACTIVITY_KIND_KERNEL') || !loaded.hasColumn('CUPTI_ACTIVITY_KIND_KERNEL', 'graphNodeId')) return false;
  return allRows(loaded.handle, selectGraphNodeKernel(loaded.handle)).length > 0;
}

/** First start and last end over the given tables (null: none of them holds a row). */
export function activitySpan(loaded: LoadedExport, tables: readonly string[]): { start: number | null; end: number | null } {
  const query = selectActivitySpan(loaded.handle, tables);
  if (query === null) return { start: null, end: null };
  const row = allRows(loaded.handle, query)[0];
  return { start: row.s, end: row.e };
}
