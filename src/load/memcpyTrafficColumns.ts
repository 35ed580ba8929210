import { columnMaker, idColumnMaker, narrowingColumnMaker, type Column, type NarrowingIntColumn, type SmallInts, type Uint32OrFloat64Column } from '../columns/typedColumn.js';

/**
 * A NULL `srcKind`/`dstKind` in its column: no ENUM_CUDA_MEM_KIND id takes it (nsys numbers them
 * from 0), and it fits a byte, so a column of NULLs (an nsys version that records none) stays narrow.
 */
export const NO_MEM_KIND = -1;

/**
 * What the memory traffic sums of each memcpy, read in the GPU-op loader's scan of the memcpy
 * table (`GpuOpsQueryOptions.trafficColumns`), so the memory part scans no table of its own. In
 * table order; only the rows with usable times (as the ops: the loader notes the others).
 */
export interface MemcpyTrafficColumns {
  count: number;
  /** In two bytes while every process id fits (`NarrowingIntColumn`). */
  pid: SmallInts;
  start: Float64Array;
  end: Float64Array;
  /** Uint32 while every size is a whole number of bytes below 4 GiB (`Uint32OrFloat64Column`). */
  bytes: Uint32Array | Float64Array;
  /** ENUM_CUDA_MEMCPY_OPER id (the direction); a byte while every id fits. */
  copyKind: SmallInts;
  /** ENUM_CUDA_MEM_KIND ids of the host side; `NO_MEM_KIND`: NULL or not recorded by this nsys version. A byte while every id fits. */
  srcKind: SmallInts;
  dstKind: SmallInts;
}

const isInt32 = (v: unknown): v is number => typeof v === 'number' && (v | 0) === v;
const isKind = (v: unknown): boolean => v === null || (isInt32(v) && v !== NO_MEM_KIND);

/**
 * The traffic columns as the scan fills them; a value they cannot hold as read gives none at all.
 * The ids and sizes in narrow arrays while they fit (25 bytes a memcpy, not 40: 23 MB on the 30x
 * bench copy's 1.5M memcpys, held from the GPU ops' read to the memory part).
 */
export class MemcpyTrafficBuilder {
  private n = 0;
  private fits = true;
  private readonly pid: NarrowingIntColumn;
  private readonly start: Column<Float64Array>;
  private readonly end: Column<Float64Array>;
  private readonly bytes: Uint32OrFloat64Column;
  private readonly copyKind: NarrowingIntColumn;
  private readonly srcKind: NarrowingIntColumn;
  private readonly dstKind: NarrowingIntColumn;

  /** `capacity`: the memcpy table's max(rowid) (at least its rows). */
  constructor(capacity: number) {
    const column = columnMaker(capacity);
    const narrowColumn = narrowingColumnMaker(capacity);
    this.pid = narrowColumn(Int16Array);
    this.start = column(Float64Array);
    this.end = column(Float64Array);
    this.bytes = idColumnMaker(capacity)();
    this.copyKind = narrowColumn(Int8Array);
    this.srcKind = narrowColumn(Int8Array);
    this.dstKind = narrowColumn(Int8Array);
  }

  /** One memcpy with usable times, in table order. */
  add(pid: number, start: number, end: number, bytes: unknown, copyKind: unknown, srcKind: unknown, dstKind: unknown): void {
    if (!this.fits) return;
    // An edited export's NULL or text where nsys writes integers: the memory part queries the
    // table instead, and sums what it reads as it always did.
    if (typeof bytes !== 'number' || !isInt32(copyKind) || !isKind(srcKind) || !isKind(dstKind)) {
      this.fits = false;
      return;
    }
    const i = this.n++;
    if (i === this.start.data.length) for (const c of [this.pid, this.start, this.end, this.bytes, this.copyKind, this.srcKind, this.dstKind]) c.ensure(i + 1);
    this.pid.put(i, pid);
    this.start.data[i] = start;
    this.end.data[i] = end;
    this.bytes.put(i, bytes);
    this.copyKind.put(i, copyKind as number);
    this.srcKind.put(i, srcKind === null ? NO_MEM_KIND : (srcKind as number));
    this.dstKind.put(i, dstKind === null ? NO_MEM_KIND : (dstKind as number));
  }

  /** The columns; null when some value did not fit them. */
  done(): MemcpyTrafficColumns | null {
    if (!this.fits) return null;
    const n = this.n;
    return {
      count: n,
      pid: this.pid.trim(n),
      start: this.start.trim(n),
      end: this.end.trim(n),
      bytes: this.bytes.trim(n),
      copyKind: this.copyKind.trim(n),
      srcKind: this.srcKind.trim(n),
      dstKind: this.dstKind.trim(n),
    };
  }
}
