import type { ExportHandle } from '../../queries/handle.js';
import { rowIdBound } from '../../queries/capture.js';
import { GpuOpKind, presentGpuOpSources, selectGpuOpsOf, type GpuOpSource } from '../../queries/gpuOps.js';

/** The kinds of GPU op (`GpuOpColumns.kind`), their names, and the tables they are read from. */
export { GpuOpKind, GPU_OP_KIND_NAMES, GPU_OP_SOURCES } from '../../queries/gpuOps.js';
import { forEachRow } from '../../queries/run.js';
import { NON_INTEGER_NAME_ID, noteExcludedRows } from '../export/excludedRows.js';
import { isValidInterval, recordRowCount } from '../../queries/validRows.js';
import { columnMaker, idColumnMaker, narrowingColumnMaker, NO_STRING_ID, type Column, type NarrowingIntColumn, type SmallInts, type Uint32OrFloat64Column } from '../columns/typedColumn.js';
import { MemcpyTrafficBuilder, type MemcpyTrafficColumns } from './memcpyTrafficColumns.js';
import { LaunchIdCheck, type LaunchIds } from './launchIds.js';
import { requireContract } from '../export/contract.js';

/**
 * Every GPU operation of the export in column arrays (scan order: kernels, memcpys, memsets,
 * whole-graph launches). Null correlation ids are NaN (CUPTI's are 32-bit unsigned, so Float64);
 * null name ids are `NO_STRING_ID`.
 */
export interface GpuOpColumns {
  count: number;
  start: Float64Array;
  end: Float64Array;
  /** In one byte while every device id fits (`NarrowingIntColumn`). */
  deviceId: SmallInts;
  /** -1 for NULL; in two bytes while every stream id fits (one would not do: pytorch-dense's memsets run on stream 141). */
  streamId: SmallInts;
  /** `globalPid`'s process id; in two bytes while every one fits. */
  pid: SmallInts;
  /** Uint32 while every id is a whole number below 2^32, as CUPTI's are (`Uint32OrFloat64Column`). */
  correlationId: Float64Array | Uint32Array;
  /** `GpuOpKind` (0 kernel, 1 memcpy, 2 memset, 3 graph). */
  kind: Uint8Array;
  /** Kernel demangled-name string id (`NO_STRING_ID` for other kinds, or null). */
  nameId: Int32Array;
  /**
   * Rows left out for unusable times (rowChecks.ts), by `GpuOpKind`: with `count`, every row of
   * the tables read (the NVTX GPU projection reads these columns only when they hold every usable
   * row). Absent on a copy of some of the ops (`filterDevice`).
   */
  invalidRows?: readonly number[];
  /**
   * The rows of each kind's table, by `GpuOpKind` (0 for a table the export lacks), when the scan
   * went through every row (no `deviceId`): what `recordGpuOpRows` records for a connection that
   * did not read them (the NVTX worker's), so no part counts a table these columns were read from.
   */
  tableRows?: readonly number[];
  /**
   * Read with `launchIds` (kernels, memcpys, memsets; not whole-graph launches): their
   * `globalPid`s' upper bits (`LaunchIds`; a NULL `globalPid` or a thread part other than 0 is
   * irregular). Read here, the NVTX GPU projection's check takes no second scan.
   */
  launchIds?: LaunchIds;
  /** Read with `slices`: what a trace slice of each op shows beyond its times (see `GpuOpSliceColumns`). */
  slices?: GpuOpSliceColumns;
  /**
   * Read with `memcpyTraffic` (no `slices`, no `deviceId`): the memcpys' traffic, from the same scan;
   * absent when some memcpy's value does not fit the columns (the memory part then queries).
   */
  memcpyTraffic?: MemcpyTrafficColumns;
}

/** Which kernel name a trace slice shows: nsys's short name (the default) or the demangled signature. */
export type KernelNameColumn = 'shortName' | 'demangledName';

/**
 * The columns of the trace's GPU-op slices (`selectGpuOpsOf` with `sliceColumns`), by op index.
 * Sized for the 10x export (6.5M ops): 4 bytes per op, plus 8 per op that is not a kernel.
 */
export interface GpuOpSliceColumns {
  /** The kernel name column read (`demangledName` when the export has no `shortName`). */
  kernelName: KernelNameColumn;
  /**
   * Kernels: that name's string id; memcpys: `copyKind`; graphs: `graphId`; -1 for NULL and
   * memsets. A value that is not a non-negative 32-bit integer is in `verbatim`.
   */
  nameId: Int32Array;
  /**
   * Memcpys and memsets: `bytes`; graphs: `graphExecId`; NaN for NULL. Kernels have none and are
   * read first, so this holds the ops from index `extraFrom` on: op i's is `extra[i - extraFrom]`.
   */
  extra: Float64Array;
  extraFrom: number;
  /**
   * Values that are neither numbers nor NULL (text in a damaged export's integer column), by op
   * index, as read: the trace writes them as JSON strings rather than dropping them.
   */
  verbatim: Map<number, VerbatimOpValues>;
}

/** An op's non-numeric values, by the column they were read from. */
export interface VerbatimOpValues {
  correlationId?: unknown;
  pid?: unknown;
  nameId?: unknown;
  catId?: unknown;
  extra?: unknown;
}

/**
 * Streams the GPU ops (kernels, memcpy, memset, graph-level traces) into typed columns: one pass
 * over the rows, SQLite drives the scan. Shared by the iterations attribution and the gaps, so an
 * analysis that needs both reads the ops once. `shared`: the columns over SharedArrayBuffers (see
 * `columnMaker`), to be read by a worker thread too.
 */
export function loadGpuOpColumns(
  handle: ExportHandle,
  opts: { deviceId?: number; launchIds?: boolean; slices?: { kernelName: KernelNameColumn }; shared?: boolean; memcpyTraffic?: boolean } = {},
): GpuOpColumns {
  requireContract(handle, 'gpuOps');
  const sources = presentGpuOpSources(handle);
  const cols = gpuOpColumnBuilders(handle, sources, opts);
  const { start, end, dev, stream, pidC, corr, kindC, name, kernelName, sliceName, sliceExtra } = cols;
  const traffic = opts.memcpyTraffic && !kernelName && opts.deviceId === undefined && handle.hasTable('CUPTI_ACTIVITY_KIND_MEMCPY') ? new MemcpyTrafficBuilder(rowIdBound(handle, 'CUPTI_ACTIVITY_KIND_MEMCPY')) : null;
  // Index of the first op that is not a kernel (kernels are read first); -1 until one is read.
  let extraFrom = -1;
  const verbatim = new Map<number, VerbatimOpValues>();
  let n = 0;
  let cap = start.data.length;
  const ids = new LaunchIdCheck();
  const invalidRows = [0, 0, 0, 0];
  const tableRows = [0, 0, 0, 0];
  // One query per table with only the columns needed (no UNION, no constant columns): the scan
  // is SQLite-bound, and every column handed to JS costs.
  for (const src of sources) {
    const kind = src.kind;
    // Every row is read and its times tested here (isValidInterval): the unusable ones are
    // counted in the same scan (rowChecks.ts), with no count(*) of the table, and cost no SQL tests.
    const checkIds = opts.launchIds === true && kind !== GpuOpKind.Graph;
    const withTraffic = traffic !== null && kind === GpuOpKind.Memcpy;
    const q = selectGpuOpsOf(handle, src, { globalPid: false, kind: false, checkTimes: false, deviceId: opts.deviceId, launchIdUpper: checkIds, trafficColumns: withTraffic, ...(kernelName ? { sliceColumns: { kernelName } } : {}) });
    let invalid = 0;
    let wrongName = 0;
    const before = n;
    /** Appends one op and returns its index; -1 for a row with unusable times (counted, left out). */
    const row = (s: number, e: number, d: number, st: number | null, c: number | null, p: number, nm: number | null, up?: number | null): number => {
      if (!isValidInterval(s, e)) {
        invalid++;
        return -1;
      }
      // A kernel name that is not a StringIds id (text or a fraction) would become another id in Int32.
      if (nm !== null && (nm | 0) !== nm) return (wrongName++, -1);
      if (checkIds) ids.see(up ?? null);
      if (n === cap) {
        for (const col of cols.all) col.ensure(n + 1);
        cap = start.data.length;
      }
      start.data[n] = s;
      end.data[n] = e;
      dev.put(n, d);
      stream.put(n, st ?? -1);
      pidC.put(n, p);
      corr.put(n, c);
      kindC.data[n] = kind;
      name.data[n] = nm ?? NO_STRING_ID;
      return n++;
    };
    if (sliceName && sliceExtra) {
      if (kind !== GpuOpKind.Kernel && extraFrom < 0) extraFrom = n;
      forEachRow(handle, q, sliceRowReader(row, kind, extraFrom, sliceName, sliceExtra, verbatim));
    } else if (withTraffic) {
      forEachRow(handle, q, trafficRowReader(row, checkIds, traffic));
    } else {
      forEachRow(handle, q, row);
    }
    noteExcludedRows(handle, src.table, invalid);
    noteExcludedRows(handle, src.table, wrongName, NON_INTEGER_NAME_ID);
    invalidRows[kind] = invalid + wrongName;
    tableRows[kind] = n - before + invalid + wrongName;
  }
  // Every row of the tables went through the scan: `info` and the projection need no count(*).
  const everyRow = opts.deviceId === undefined;
  if (everyRow) recordGpuOpRows(handle, { tableRows });
  const memcpyTraffic = traffic?.done();
  return {
    ...filledOps(cols, n),
    invalidRows,
    ...(everyRow ? { tableRows } : {}),
    ...(opts.launchIds ? { launchIds: ids.result() } : {}),
    ...(kernelName && sliceName && sliceExtra ? { slices: sliceColumnsOf(kernelName, sliceName.trim(n), sliceExtra, extraFrom < 0 ? n : extraFrom, n, verbatim) } : {}),
    ...(memcpyTraffic ? { memcpyTraffic } : {}),
  };
}

/** The filled part of the op columns (views of the first `n` rows). */
function filledOps(cols: ReturnType<typeof gpuOpColumnBuilders>, n: number) {
  return {
    count: n,
    start: cols.start.trim(n),
    end: cols.end.trim(n),
    deviceId: cols.dev.trim(n),
    streamId: cols.stream.trim(n),
    pid: cols.pidC.trim(n),
    correlationId: cols.corr.trim(n),
    kind: cols.kindC.trim(n),
    nameId: cols.name.trim(n),
  };
}

/**
 * The row visitor of the memcpy table read with its traffic columns, which come last (after
 * launchIdUpper when the ids are checked): `row` appends the op, then its traffic is kept.
 */
function trafficRowReader(row: (s: number, e: number, d: number, st: number | null, c: number | null, p: number, nm: number | null, up?: number | null) => number, checkIds: boolean, traffic: MemcpyTrafficBuilder) {
  if (checkIds) {
    return (s: number, e: number, d: number, st: number | null, c: number | null, p: number | null, nm: number | null, up: number | null, b: unknown, ck: unknown, sk: unknown, dk: unknown) => {
      if (row(s, e, d, st, c, p as number, nm, up) >= 0) traffic.add(p ?? 0, s, e, b, ck, sk, dk);
    };
  }
  return (s: number, e: number, d: number, st: number | null, c: number | null, p: number | null, nm: number | null, b: unknown, ck: unknown, sk: unknown, dk: unknown) => {
    if (row(s, e, d, st, c, p as number, nm) >= 0) traffic.add(p ?? 0, s, e, b, ck, sk, dk);
  };
}

/**
 * Records for `handle` the row count of each GPU-op table the columns were read from, when they
 * hold them (`tableRows`): for columns read on another connection too, so no part counts a table
 * again (`countAllRows`).
 */
export function recordGpuOpRows(handle: ExportHandle, cols: Pick<GpuOpColumns, 'tableRows'>): void {
  if (!cols.tableRows) return;
  for (const src of presentGpuOpSources(handle)) recordRowCount(handle, src.table, cols.tableRows[src.kind]);
}

/**
 * The growable columns of the GPU-op scan, and the trace's slice columns when `opts.slices` asks.
 * Sized up front (max(rowid) is a b-tree lookup, at least the row count of an export's tables):
 * growing by doubling would hold up to twice the memory at the end, 1.5x the rows on average.
 */
function gpuOpColumnBuilders(handle: ExportHandle, sources: readonly GpuOpSource[], opts: { slices?: { kernelName: KernelNameColumn }; shared?: boolean }) {
  const cap0 = sources.reduce((a, src) => a + rowIdBound(handle, src.table), 0);
  const column = columnMaker(cap0, opts.shared);
  const start = column(Float64Array);
  const end = column(Float64Array);
  const narrowColumn = narrowingColumnMaker(cap0, opts.shared);
  const dev = narrowColumn(Int8Array);
  const stream = narrowColumn(Int16Array);
  // A container's process ids fit in two bytes (14 MB on the 10x bench export's 7M ops).
  const pidC = narrowColumn(Int16Array);
  const corr = idColumnMaker(cap0, opts.shared)();
  const kindC = column(Uint8Array);
  const name = column(Int32Array);
  const all = [start, end, dev, stream, pidC, corr, kindC, name] as (Column<Float64Array | Int32Array | Uint8Array> | NarrowingIntColumn | Uint32OrFloat64Column)[];
  // Trace slice columns, only when asked (the trace).
  const kernelName: KernelNameColumn | null = opts.slices ? (handle.hasColumn('CUPTI_ACTIVITY_KIND_KERNEL', 'shortName') ? opts.slices.kernelName : 'demangledName') : null;
  const sliceName = kernelName ? column(Int32Array) : null;
  if (sliceName) all.push(sliceName);
  const extraCap = sources.reduce((a, src) => (src.kind === GpuOpKind.Kernel ? a : a + rowIdBound(handle, src.table)), 0);
  const sliceExtra = kernelName ? columnMaker(extraCap, opts.shared)(Float64Array) : null;
  return { start, end, dev, stream, pidC, corr, kindC, name, all, kernelName, sliceName, sliceExtra };
}

/**
 * The row visitor of a table read with slice columns, which come between pid and launchIdUpper:
 * nameId (the slice's), catId (the demangled name), extra. `row` appends the op; anything but a
 * number or NULL is kept as read (`verbatim`), and so is a slice name id that does not fit the
 * Int32 column. Ops that are not kernels keep their extra at `index - extraFrom`.
 */
function sliceRowReader(
  row: (s: number, e: number, d: number, st: number | null, c: number | null, p: number, nm: number | null, up?: number | null) => number,
  kind: GpuOpKind,
  extraFrom: number,
  sliceName: Column<Int32Array>,
  sliceExtra: Column<Float64Array>,
  verbatim: Map<number, VerbatimOpValues>,
) {
  return (s: number, e: number, d: number, st: number | null, c: unknown, p: unknown, sn: unknown, cat: unknown, ex: unknown, up?: number | null) => {
    const i = row(s, e, d, st, c as number | null, p as number, cat as number | null, up);
    if (i < 0) return;
    const snFits = sn === null || (typeof sn === 'number' && sn >= 0 && (sn | 0) === sn);
    if (typeof p !== 'number' || !snFits || !(isNumberOrNull(c) && isNumberOrNull(cat) && isNumberOrNull(ex))) {
      verbatim.set(i, verbatimOf({ correlationId: c, pid: p, nameId: sn, catId: cat, extra: ex }, !snFits));
    }
    sliceName.data[i] = snFits ? ((sn as number | null) ?? -1) : -1;
    if (kind !== GpuOpKind.Kernel) {
      const k = i - extraFrom;
      sliceExtra.ensure(k + 1);
      sliceExtra.data[k] = (ex as number | null) ?? NaN;
    }
  };
}

function sliceColumnsOf(kernelName: KernelNameColumn, nameId: Int32Array, extra: Column<Float64Array>, extraFrom: number, n: number, verbatim: Map<number, VerbatimOpValues>): GpuOpSliceColumns {
  return { kernelName, nameId, extra: extra.trim(n - extraFrom), extraFrom, verbatim };
}

const isNumberOrNull = (v: unknown): boolean => v === null || typeof v === 'number';

/**
 * The values of `read` that are neither numbers nor NULL (NULL pids too: a pid column holds one
 * for every op), and the slice name id when it does not fit its column (`nameIdOutOfRange`).
 */
function verbatimOf(read: Required<VerbatimOpValues>, nameIdOutOfRange: boolean): VerbatimOpValues {
  const out: VerbatimOpValues = {};
  for (const k of Object.keys(read) as (keyof VerbatimOpValues)[]) {
    const v = read[k];
    if (!isNumberOrNull(v) || (k === 'pid' && v === null) || (k === 'nameId' && nameIdOutOfRange)) out[k] = v;
  }
  return out;
}

/** The ops of one device: a copy, or `ops` itself when every op is on that device. */
export function filterDevice(ops: GpuOpColumns, deviceId: number): GpuOpColumns {
  let m = 0;
  for (let i = 0; i < ops.count; i++) if (ops.deviceId[i] === deviceId) m++;
  if (m === ops.count) return ops;
  const pick = <T extends Float64Array | Int32Array | Uint8Array | Uint32Array | SmallInts>(a: T): T => {
    const out = new (a.constructor as new (k: number) => T)(m);
    for (let i = 0, k = 0; i < ops.count; i++) if (ops.deviceId[i] === deviceId) out[k++] = a[i];
    return out;
  };
  return {
    count: m,
    start: pick(ops.start),
    end: pick(ops.end),
    deviceId: pick(ops.deviceId),
    streamId: pick(ops.streamId),
    pid: pick(ops.pid),
    correlationId: pick(ops.correlationId),
    kind: pick(ops.kind),
    nameId: pick(ops.nameId),
  };
}
