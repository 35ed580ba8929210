import { columnMaker, type Column } from '../columns/typedColumn.js';

/** A NULL `srcKind`/`dstKind` in its Int32 column (no ENUM_CUDA_MEM_KIND id takes it). */
export const NO_MEM_KIND = -2147483648;

/**
 * What the memory traffic sums of each memcpy, read in the GPU-op loader's scan of the memcpy
 * table (`GpuOpsQueryOptions.trafficColumns`), so the memory part scans no table of its own. In
 * table order; only the rows with usable times (as the ops: the loader notes the others).
 */
export interface MemcpyTrafficColumns {
  count: number;
  pid: Int32Array;
  start: Float64Array;
  end: Float64Array;
  bytes: Float64Array;
  /** ENUM_CUDA_MEMCPY_OPER id (the direction). */
  copyKind: Int32Array;
  /** ENUM_CUDA_MEM_KIND ids of the host side; `NO_MEM_KIND`: NULL or not recorded by this nsys version. */
  srcKind: Int32Array;
  dstKind: Int32Array;
}

const isInt32 = (v: unknown): v is number => typeof v === 'number' && (v | 0) === v;
const isKind = (v: unknown): boolean => v === null || (isInt32(v) && v !== NO_MEM_KIND);

/** The traffic columns as the scan fills them; a value they cannot hold as read gives none at all. */
export class MemcpyTrafficBuilder {
  private n = 0;
  private fits = true;
  private readonly pid: Column<Int32Array>;
  private readonly start: Column<Float64Array>;
  private readonly end: Column<Float64Array>;
  private readonly bytes: Column<Float64Array>;
  private readonly copyKind: Column<Int32Array>;
  private readonly srcKind: Column<Int32Array>;
  private readonly dstKind: Column<Int32Array>;

  /** `capacity`: the memcpy table's max(rowid) (at least its rows). */
  constructor(capacity: number) {
    const column = columnMaker(capacity);
    this.pid = column(Int32Array);
    this.start = column(Float64Array);
    this.end = column(Float64Array);
    this.bytes = column(Float64Array);
    this.copyKind = column(Int32Array);
    this.srcKind = column(Int32Array);
    this.dstKind = column(Int32Array);
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
    if (i === this.pid.data.length) for (const c of [this.pid, this.start, this.end, this.bytes, this.copyKind, this.srcKind, this.dstKind] as Column<Float64Array | Int32Array>[]) c.ensure(i + 1);
    this.pid.data[i] = pid;
    this.start.data[i] = start;
    this.end.data[i] = end;
    this.bytes.data[i] = bytes;
    this.copyKind.data[i] = copyKind;
    this.srcKind.data[i] = srcKind === null ? NO_MEM_KIND : (srcKind as number);
    this.dstKind.data[i] = dstKind === null ? NO_MEM_KIND : (dstKind as number);
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
