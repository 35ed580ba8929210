import { unionIntervals, type IntervalSet } from './intervals.js';

/**
 * A busy union (`unionIntervals` of GPU ops: sorted, disjoint, each of positive length), packed in
 * 8 bytes an interval. The busy union of back-to-back kernels has about one interval per op (6.95M
 * on the 10x bench export's 7.04M ops), held through the gap scan, the iteration attribution and
 * the short gaps' placement beside the GPU ops and API calls: 56 MB packed, against 111 MB as two
 * Float64 arrays (84 MB as starts and Uint32 lengths, the form before).
 *
 * Packed (`packed` not null): per interval i, `packed[2i]` is its start's offset from its block's
 * base (`bases[i >> 8]`, the start of the block's first interval: `BLOCK` intervals a block) and
 * `packed[2i + 1]` its length, both whole ns below 2^32 - 1; a start whose offset does not fit (an
 * idle time of 4.3 s or more inside a block, a fraction) is `FAR_START` there and kept whole in
 * `farStarts`. Wide (`packed` null): `starts` and `ends` as the union gave them, when some length
 * does not fit or too many starts are far (a set of fractional times).
 */
export interface BusyIntervals {
  readonly count: number;
  readonly packed: Uint32Array | null;
  readonly bases: Float64Array | null;
  readonly farStarts: ReadonlyMap<number, number> | null;
  readonly starts: Float64Array | null;
  readonly ends: Float64Array | null;
}

/** Intervals a block of the packed form (one base each). */
const BLOCK_BITS = 8;
/** The offset that marks a start kept in `farStarts`. */
const FAR_START = 0xffffffff;

/**
 * The busy union of the intervals [starts[i], ends[i]) (see `unionIntervals`), packed. The union's
 * own arrays are fresh: the packed pairs are written over its ends, in place (each pair takes the 8
 * bytes of the end it replaces, after that end is read), so the union's starts are the only copy let go.
 */
export function busyUnionOf(starts: ArrayLike<number>, ends: ArrayLike<number>): BusyIntervals {
  return pack(unionIntervals(starts, ends), true);
}

/** `set` packed when it fits (into new memory: `set` is left as it is), else as it is. */
export function busyIntervalsOf(set: IntervalSet): BusyIntervals {
  return pack(set, false);
}

function pack(set: IntervalSet, overEnds: boolean): BusyIntervals {
  const n = set.starts.length;
  const far = farStartsOf(set, n);
  if (far === null) return { count: n, packed: null, bases: null, farStarts: null, starts: set.starts, ends: set.ends };
  const bases = new Float64Array((n + (1 << BLOCK_BITS) - 1) >>> BLOCK_BITS);
  for (let b = 0; b < bases.length; b++) bases[b] = set.starts[b << BLOCK_BITS];
  const packed = overEnds ? new Uint32Array(set.ends.buffer, set.ends.byteOffset, 2 * n) : new Uint32Array(2 * n);
  writePairs(set.starts, set.ends, bases, packed, n);
  return { count: n, packed, bases, farStarts: far, starts: null, ends: null };
}

/**
 * The starts kept whole (index -> start) when the set can be packed: every length a whole number
 * below 2^32 that gives the end back exactly, and at most one start in 64 far from its block's
 * base; else null (the wide form).
 */
function farStartsOf(set: IntervalSet, n: number): Map<number, number> | null {
  const { starts, ends } = set;
  const far = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const len = ends[i] - starts[i];
    if (len >>> 0 !== len || starts[i] + len !== ends[i]) return null;
    const base = starts[(i >>> BLOCK_BITS) << BLOCK_BITS];
    const off = starts[i] - base;
    if (off >>> 0 !== off || off === FAR_START || base + off !== starts[i]) {
      far.set(i, starts[i]);
      if (far.size * 64 > n) return null;
    }
  }
  return far;
}

/** Each interval's (offset, length) into `packed` (which may be `ends`' own memory: its end is read first). */
function writePairs(starts: Float64Array, ends: Float64Array, bases: Float64Array, packed: Uint32Array, n: number): void {
  for (let i = 0; i < n; i++) {
    const s = starts[i];
    const e = ends[i];
    const off = s - bases[i >>> BLOCK_BITS];
    packed[2 * i] = off >>> 0 === off && off !== FAR_START && bases[i >>> BLOCK_BITS] + off === s ? off : FAR_START;
    packed[2 * i + 1] = e - s;
  }
}

/** The start of interval `i`. */
export function busyStartAt(b: BusyIntervals, i: number): number {
  if (b.packed === null) return b.starts![i];
  const off = b.packed[2 * i];
  return off !== FAR_START ? b.bases![i >>> BLOCK_BITS] + off : b.farStarts!.get(i)!;
}

/** The end of interval `i`. */
export function busyEndAt(b: BusyIntervals, i: number): number {
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
