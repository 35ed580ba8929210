import { unionIntervals, unionOfStartRunsInto, type IntervalSet, type IntervalSink } from './intervals.js';

/**
 * A busy union (`unionIntervals` of GPU ops: sorted, disjoint, each of positive length) in 4 or 8
 * bytes an interval. The busy union of back-to-back kernels has about one interval per op (7.04M
 * intervals of the 10x bench export's 7.04M ops: 81 merged), held through the gap scan, the
 * iteration attribution and the short gaps' placement beside the GPU ops and API calls.
 *
 * Over the ops (`opOf` not null; `busyUnionOverOps`, the loader's union of every op): per interval
 * i, `opOf[i]` is the op whose start it is, and the interval ends where that op does; when ops
 * merged into a later end, `opOf[i]` is the op plus `MERGED_END` and the end is kept whole in
 * `mergedEnds`. 4 bytes an interval (28 MB on the 10x copy, 80 MB at 30x, against 8 packed), and
 * no copy of a start or end: the ops' columns are read, and held as long as the union is.
 *
 * Packed (`packed` not null): per interval i, `packed[2i]` is its start's offset from its block's
 * base (`bases[i >> 8]`, the start of the block's first interval: `BLOCK` intervals a block) and
 * `packed[2i + 1]` its length, both whole ns below 2^32 - 1; a start whose offset does not fit (an
 * idle time of 4.3 s or more inside a block, a fraction) is `FAR_START` there and kept whole in
 * `farStarts`. Wide (`packed` and `opOf` null): `starts` and `ends` as the union gave them, when
 * some length does not fit or too many starts are far (a set of fractional times).
 */
export interface BusyIntervals {
  readonly count: number;
  readonly opOf: Uint32Array | null;
  readonly opStarts: Float64Array | null;
  readonly opEnds: Float64Array | null;
  readonly mergedEnds: ReadonlyMap<number, number> | null;
  readonly packed: Uint32Array | null;
  readonly bases: Float64Array | null;
  readonly farStarts: ReadonlyMap<number, number> | null;
  readonly starts: Float64Array | null;
  readonly ends: Float64Array | null;
}

/** Added to an op index in `opOf`: the interval's end is in `mergedEnds`, not the op's. */
const MERGED_END = 0x80000000;

/** The fields of the forms a union is not in (every union has all ten: one shape for V8). */
const NOT_OVER_OPS = { opOf: null, opStarts: null, opEnds: null, mergedEnds: null } as const;
const NOT_PACKED = { packed: null, bases: null, farStarts: null } as const;
const NOT_WIDE = { starts: null, ends: null } as const;

/** Intervals a block of the packed form (one base each). */
const BLOCK_BITS = 8;
/** The offset that marks a start kept in `farStarts`. */
const FAR_START = 0xffffffff;

/**
 * The busy union of the intervals [starts[i], ends[i]) (see `unionIntervals`), packed. GPU ops (a
 * few runs of ascending starts) are packed as the sweep gives them (`PackingSink`): 8 bytes an op
 * at the peak, where the union as two Float64 arrays was 16 (312 MB on the 30x bench export's
 * 19.5M ops). Else the union's own arrays are fresh, and it is packed over its ends (`pack`), so
 * the union's starts are the only copy let go.
 */
export function busyUnionOf(starts: ArrayLike<number>, ends: ArrayLike<number>): BusyIntervals {
  const swept = unionOfStartRunsInto(starts, ends, () => new PackingSink(starts.length));
  return swept ? swept.finish() : pack(unionIntervals(starts, ends), true);
}

/**
 * The busy union of the ops [starts[i], ends[i]) held over their columns (see `BusyIntervals`):
 * built as the sweep gives it when the starts come in a few ascending runs (GPU ops, table by
 * table) and at most one interval in 64 ends past its own op's end; else packed (`busyUnionOf`).
 * The columns are read whenever the union is: it is held no longer than they are (the loader
 * lets both go together).
 */
export function busyUnionOverOps(starts: Float64Array, ends: Float64Array): BusyIntervals {
  const swept = unionOfStartRunsInto(starts, ends, () => new IndexingSink(starts, ends));
  return swept?.finish() ?? busyUnionOf(starts, ends);
}

/** The union's intervals as the ops whose starts they are (`BusyIntervals.opOf`); null from `finish` when too many ends merged. */
class IndexingSink implements IntervalSink {
  private k = 0;
  private readonly opOf: Uint32Array;
  private readonly merged = new Map<number, number>();

  constructor(
    private readonly starts: Float64Array,
    private readonly ends: Float64Array,
  ) {
    this.opOf = new Uint32Array(starts.length);
  }

  push(_start: number, end: number, first: number): void {
    const k = this.k++;
    if (this.ends[first] === end) this.opOf[k] = first;
    else {
      this.opOf[k] = first + MERGED_END;
      this.merged.set(k, end);
    }
  }

  finish(): BusyIntervals | null {
    const n = this.k;
    if (this.merged.size * 64 > n) return null;
    // The slack kept as a view when at least half is used (as `unionIntervals` does), else cut.
    const opOf = 2 * n >= this.opOf.length ? this.opOf.subarray(0, n) : this.opOf.slice(0, n);
    return { count: n, opOf, opStarts: this.starts, opEnds: this.ends, mergedEnds: this.merged, ...NOT_PACKED, ...NOT_WIDE };
  }
}

/**
 * Packs a union's intervals as they come (in order, at most `capacity` of them): the packed pairs
 * while every length is a whole number below 2^32 that gives the end back exactly, the far starts
 * beside them; the wide form from the first length that does not fit, or at the end when more
 * than one start in 64 is far (a set of fractional times, rare: the pairs are unpacked then). The
 * one place the packed form is decided and written (`busyUnionOf` by the sweep, `pack` from a set).
 */
class PackingSink implements IntervalSink {
  private k = 0;
  private packed: Uint32Array;
  private readonly bases: Float64Array;
  private readonly far = new Map<number, number>();
  private wide: { starts: Float64Array; ends: Float64Array } | null = null;

  /** `packed`: where the pairs go (2 x `capacity`), when not new memory (`pack` over a set's ends). */
  constructor(
    private readonly capacity: number,
    packed?: Uint32Array,
  ) {
    this.packed = packed ?? new Uint32Array(2 * capacity);
    this.bases = new Float64Array((capacity + (1 << BLOCK_BITS) - 1) >>> BLOCK_BITS);
  }

  push(start: number, end: number): void {
    const k = this.k++;
    const len = end - start;
    if (this.wide === null && (len >>> 0 !== len || start + len !== end)) this.wide = this.unpacked(this.capacity, k);
    if (this.wide !== null) {
      this.wide.starts[k] = start;
      this.wide.ends[k] = end;
      return;
    }
    if ((k & ((1 << BLOCK_BITS) - 1)) === 0) this.bases[k >>> BLOCK_BITS] = start;
    const base = this.bases[k >>> BLOCK_BITS];
    const off = start - base;
    if (off >>> 0 === off && off !== FAR_START && base + off === start) this.packed[2 * k] = off;
    else {
      this.packed[2 * k] = FAR_START;
      this.far.set(k, start);
    }
    this.packed[2 * k + 1] = len;
  }

  /** The union: the slack of the arrays kept as views when at least half is used (as `unionIntervals` does), else cut. */
  finish(): BusyIntervals {
    const n = this.k;
    const keep = 2 * n >= this.capacity;
    const cut = (a: Float64Array, m: number): Float64Array => (keep ? a.subarray(0, m) : a.slice(0, m));
    if (this.wide === null && this.far.size * 64 > n) this.wide = this.unpacked(n, n);
    if (this.wide !== null) return { count: n, ...NOT_OVER_OPS, ...NOT_PACKED, starts: cut(this.wide.starts, n), ends: cut(this.wide.ends, n) };
    const blocks = (n + (1 << BLOCK_BITS) - 1) >>> BLOCK_BITS;
    const packed = keep ? this.packed.subarray(0, 2 * n) : this.packed.slice(0, 2 * n);
    return { count: n, ...NOT_OVER_OPS, packed, bases: cut(this.bases, blocks), farStarts: this.far, ...NOT_WIDE };
  }

  /** The first `n` intervals packed so far as two Float64 arrays of `size` (the pairs let go). */
  private unpacked(size: number, n: number): { starts: Float64Array; ends: Float64Array } {
    const b: BusyIntervals = { count: n, ...NOT_OVER_OPS, packed: this.packed, bases: this.bases, farStarts: this.far, ...NOT_WIDE };
    const starts = new Float64Array(size);
    const ends = new Float64Array(size);
    for (let i = 0; i < n; i++) {
      starts[i] = busyStartAt(b, i);
      ends[i] = busyEndAt(b, i);
    }
    this.packed = new Uint32Array(0);
    return { starts, ends };
  }
}

/** `set` packed when it fits (into new memory: `set` is left as it is), else its values in the wide form. */
export function busyIntervalsOf(set: IntervalSet): BusyIntervals {
  return pack(set, false);
}

/**
 * `set` through `PackingSink`; `overEnds`: the pairs written over its ends, in place (each pair takes
 * the 8 bytes of the end it replaces, and interval i is read before its pair is written).
 */
function pack(set: IntervalSet, overEnds: boolean): BusyIntervals {
  const n = set.starts.length;
  const sink = new PackingSink(n, overEnds ? new Uint32Array(set.ends.buffer, set.ends.byteOffset, 2 * n) : undefined);
  for (let i = 0; i < n; i++) sink.push(set.starts[i], set.ends[i]);
  return sink.finish();
}

/** The start of interval `i`. */
export function busyStartAt(b: BusyIntervals, i: number): number {
  if (b.opOf !== null) return b.opStarts![b.opOf[i] & ~MERGED_END];
  if (b.packed === null) return b.starts![i];
  const off = b.packed[2 * i];
  // `+`: a number on both paths, so a caller's loop keeps the start unboxed (a Map's value could be
  // anything: each start would be a new heap number, 300 MB of garbage in one pass on the 10x copy).
  return off !== FAR_START ? b.bases![i >>> BLOCK_BITS] + off : +b.farStarts!.get(i)!;
}

/** The end of interval `i`. */
export function busyEndAt(b: BusyIntervals, i: number): number {
  if (b.opOf !== null) {
    const op = b.opOf[i];
    return op < MERGED_END ? b.opEnds![op] : +b.mergedEnds!.get(i)!;
  }
  return b.packed !== null ? busyStartAt(b, i) + b.packed[2 * i + 1] : b.ends![i];
}

/** Total length covered (the intervals are disjoint). */
export function busyLength(b: BusyIntervals): number {
  let t = 0;
  for (let i = 0; i < b.count; i++) t += busyEndAt(b, i) - busyStartAt(b, i);
  return t;
}

/** Index of the first interval whose end is after `t` (binary search: the ends ascend). */
function firstEndingAfter(b: BusyIntervals, t: number): number {
  let lo = 0;
  let hi = b.count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (busyEndAt(b, mid) <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Length of `b` inside [a, z) (`overlapLength` of the same set). */
export function busyOverlap(b: BusyIntervals, a: number, z: number): number {
  if (z <= a) return 0;
  let t = 0;
  for (let i = firstEndingAfter(b, a); i < b.count && busyStartAt(b, i) < z; i++) t += Math.min(z, busyEndAt(b, i)) - Math.max(a, busyStartAt(b, i));
  return t;
}
