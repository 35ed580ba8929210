import { unionIntervals, type IntervalSet } from './intervals.js';

/**
 * A busy union (`unionIntervals` of GPU ops: sorted, disjoint, each of positive length) held as
 * starts and lengths. The busy union of back-to-back kernels has about one interval per op (6.95M
 * on the 10x bench export's 7.04M ops), and it is held through the gap scan, the iteration
 * attribution and the short gaps' placement, beside the GPU ops and API calls: a length in 4 bytes
 * instead of an end in 8 is 28 MB there. A length that is not a whole number of ns below 2^32 (an
 * interval of 4.3 s or more without a gap) keeps the ends instead, for the whole set.
 */
export interface BusyIntervals {
  readonly count: number;
  readonly starts: Float64Array;
  /** Each interval's end minus its start; null when some length does not fit (then `ends`). */
  readonly lengths: Uint32Array | null;
  readonly ends: Float64Array | null;
}

/** The busy union of the intervals [starts[i], ends[i]) (see `unionIntervals`), as starts and lengths. */
export function busyUnionOf(starts: ArrayLike<number>, ends: ArrayLike<number>): BusyIntervals {
  return busyIntervalsOf(unionIntervals(starts, ends));
}

/** `set` as starts and lengths when every length fits, else as it is. */
export function busyIntervalsOf(set: IntervalSet): BusyIntervals {
  const n = set.starts.length;
  const lengths = lengthsOf(set.starts, set.ends, n);
  return lengths ? { count: n, starts: set.starts, lengths, ends: null } : { count: n, starts: set.starts, lengths: null, ends: set.ends };
}

/** end - start per interval, when each is a whole number below 2^32 that gives the end back exactly; else null. */
function lengthsOf(starts: Float64Array, ends: Float64Array, n: number): Uint32Array | null {
  const lengths = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const len = ends[i] - starts[i];
    if (len >>> 0 !== len || starts[i] + len !== ends[i]) return null;
    lengths[i] = len;
  }
  return lengths;
}

/** The end of interval `i`. */
export function busyEndAt(b: BusyIntervals, i: number): number {
  return b.lengths !== null ? b.starts[i] + b.lengths[i] : b.ends![i];
}

/** Total length covered (the intervals are disjoint). */
export function busyLength(b: BusyIntervals): number {
  let t = 0;
  for (let i = 0; i < b.count; i++) t += busyEndAt(b, i) - b.starts[i];
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
  for (let i = firstEndingAfter(b, a); i < b.count && b.starts[i] < z; i++) t += Math.min(z, busyEndAt(b, i)) - Math.max(a, b.starts[i]);
  return t;
}
