import type { ExportHandle } from '../../queries/handle.js';
import { rowIdBound } from '../../queries/capture.js';
import { allRows, forEachRow } from '../../queries/run.js';
import { selectApiCallRows } from '../../queries/runtime.js';

/** An API name without nsys's version suffix (`cudaLaunchKernel_v7000` -> `cudaLaunchKernel`). */
export { stripApiVersion } from '../../queries/runtime.js';
import { noteExcludedRows } from '../export/excludedRows.js';
import { countAllRows, isValidInterval, recordRowCount } from '../../queries/validRows.js';
import { columnMaker, idColumnMaker, narrowingColumnMaker, NO_STRING_ID, type Column, type NarrowingIntColumn, type SmallInts, type Uint32OrFloat64Column } from '../columns/typedColumn.js';
import { requireContract } from '../export/contract.js';
import { DurationEndsColumn, endAt, type DurationEnds } from '../columns/durationEnds.js';
import { LaunchIdCheck, type LaunchIds } from './launchIds.js';

/**
 * CUDA runtime/driver API calls in column arrays, read in one pass and shared by the analyses
 * that need them (iteration attribution, gap causes). 2022.x exports repeat calls as
 * CUDA-backtrace rows (eventClass 67) with the same correlationId: left out.
 *
 * pid and tid are 24-bit fields of globalTid and string ids Int32 (`NO_STRING_ID`: none): each is
 * held in two bytes while every value fits (`NarrowingIntColumn`: a container's process and thread
 * ids, the few hundred API names), else in Int32, read back as the same numbers (6 bytes a call, 21
 * MB on the 10x bench export's 3.6M calls). Correlation ids are 32-bit unsigned in CUPTI: Uint32
 * while each is one, else Float64 with NaN for none (`Uint32OrFloat64Column`).
 */
export interface ApiCallColumns {
  count: number;
  pid: SmallInts;
  tid: SmallInts;
  /** Uint32 while every id is a whole number below 2^32 (`Uint32OrFloat64Column`). */
  correlationId: Float64Array | Uint32Array;
  start: Float64Array;
  /** Each call's end as its duration (`DurationEnds`: 4 bytes a call, a long one kept whole); read with `callEnd`. */
  end: DurationEnds;
  /** StringIds id of the call's name, `NO_STRING_ID` when null. */
  nameId: SmallInts;
  /** Latest end of any call (0 when there are none). */
  maxEndNs: number;
  /**
   * Rows left out as nsys 2022.x backtrace rows (`eventClass` 67, or NULL): the table holds calls
   * these columns do not (`info` then reads the table itself).
   */
  backtraceRows: number;
  /** Rows left out for unusable times (rowChecks.ts): with `count` and `backtraceRows`, every row of the table. */
  invalidRows: number;
  /**
   * Read with `launchIds`: the calls' `globalTid`s' upper bits (`LaunchIds`; a NULL `globalTid` is
   * irregular). Read here, the NVTX GPU projection's check takes no scan of its own.
   */
  launchIds?: LaunchIds;
}

/** The end of call `i`. */
export function callEnd(calls: ApiCallColumns, i: number): number {
  return endAt(calls.start, calls.end, i);
}

/**
 * Records for `handle` what `loadApiCallColumns` records as it scans, for columns read on another
 * connection (a read worker's): the table's row count (every row was scanned), so no part counts
 * it again.
 */
export function recordApiCallRows(handle: ExportHandle, cols: ApiCallColumns): void {
  if (handle.hasTable('CUPTI_ACTIVITY_KIND_RUNTIME')) recordRowCount(handle, 'CUPTI_ACTIVITY_KIND_RUNTIME', cols.count + cols.invalidRows + cols.backtraceRows);
}

/**
 * `shared`: the columns over SharedArrayBuffers (see `columnMaker`), to be read by a worker thread
 * too. `launchIds`: check the calls' launch ids in the scan (`ApiCallColumns.launchIds`).
 */
export function loadApiCallColumns(handle: ExportHandle, opts: { shared?: boolean; launchIds?: boolean } = {}): ApiCallColumns {
  requireContract(handle, 'apiCalls');
  const present = handle.hasTable('CUPTI_ACTIVITY_KIND_RUNTIME');
  // Sized up front from max(rowid) (a b-tree lookup, at least the row count): no doubling slack
  // on millions of calls; the arrays are views of the filled part.
  const cap = present ? rowIdBound(handle, 'CUPTI_ACTIVITY_KIND_RUNTIME') : 0;
  const column = columnMaker(cap, opts.shared);
  const narrowColumn = narrowingColumnMaker(cap, opts.shared);
  const pid = narrowColumn(Int16Array);
  const tid = narrowColumn(Int16Array);
  const corr = idColumnMaker(cap, opts.shared)();
  const start = column(Float64Array);
  const end = new DurationEndsColumn(column(Uint32Array));
  const name = narrowColumn(Int16Array);
  const cols = [pid, tid, corr, start, end, name] as (Column<Float64Array> | NarrowingIntColumn | Uint32OrFloat64Column | DurationEndsColumn)[];
  let n = 0;
  let maxEnd = 0;
  let backtraceRows = 0;
  let invalid = 0;
  const ids = new LaunchIdCheck();
  if (present) {
    // Every (non-backtrace) row is read and its times tested here, so the unusable ones are
    // counted in the same scan (no count(*) of them, no SQL tests).
    const checkIds = opts.launchIds === true;
    const q = selectApiCallRows(handle, { checkTimes: false, launchIdUpper: checkIds });
    const hasEventClass = handle.hasColumn('CUPTI_ACTIVITY_KIND_RUNTIME', 'eventClass');
    let room = pid.data.length;
    forEachRow(handle, q, (p: number, t: number, c: number | null, s: number, e: number, nm: number | null, up?: number | null) => {
      if (!isValidInterval(s, e)) {
        invalid++;
        return;
      }
      if (checkIds) ids.see(up ?? null);
      if (n === room) {
        for (const col of cols) col.ensure(n + 1);
        room = pid.data.length;
      }
      pid.put(n, p);
      tid.put(n, t);
      corr.put(n, c);
      start.data[n] = s;
      end.put(n, s, e);
      name.put(n, nm ?? NO_STRING_ID);
      if (e > maxEnd) maxEnd = e;
      n++;
    });
    // Rows other than backtrace rows: those read (usable or not).
    const kept = n + invalid;
    if (hasEventClass) backtraceRows = countAllRows(handle, 'CUPTI_ACTIVITY_KIND_RUNTIME') - kept;
    else recordRowCount(handle, 'CUPTI_ACTIVITY_KIND_RUNTIME', kept);
    noteExcludedRows(handle, 'CUPTI_ACTIVITY_KIND_RUNTIME', invalid);
  }
  return {
    count: n,
    pid: pid.trim(n),
    tid: tid.trim(n),
    correlationId: corr.trim(n),
    start: start.trim(n),
    end: end.trim(n),
    nameId: name.trim(n),
    maxEndNs: maxEnd,
    backtraceRows,
    invalidRows: invalid,
    ...(opts.launchIds ? { launchIds: ids.result() } : {}),
  };
}
