import { idColumnMaker, type Uint32OrFloat64Column } from '../columns/typedColumn.js';

/**
 * The statistics `nsys stats` prints for a group of durations: total, count, mean, median (mean of
 * the two middle values for an even count), min, max and the sample standard deviation (n-1; 0
 * for a single value).
 */
export interface DurationStats {
  total: number;
  count: number;
  avg: number;
  med: number;
  min: number;
  max: number;
  stdDev: number;
}

/** Growable Float64 buffer: collects a group's values without an array of boxed numbers. */
export class Float64Buffer {
  private buf: Float64Array;
  length = 0;
  constructor(capacity = 16) {
    this.buf = new Float64Array(capacity);
  }
  push(v: number): void {
    if (this.length === this.buf.length) {
      const next = new Float64Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length++] = v;
  }
  /** A view of the values (shares memory with the buffer). */
  view(): Float64Array {
    return this.buf.subarray(0, this.length);
  }
}

/** The durations `durationStats` reads: the same numbers in either array. */
export type Durations = Float64Array | Uint32Array;

/**
 * Growable durations of a group: in a `Uint32Array` while each is a whole number of ns below 2^32
 * (4.29 s), else from then on in a `Float64Array`, as `Float64Buffer` holds them. The NVTX summary
 * keeps every range's duration for the medians: 8M ranges on the 10x bench export, 34 MB less
 * while the NVTX columns and the read of the GPU ops' launches on another thread are held too.
 */
export class DurationBuffer {
  // The loaders' column of ids does exactly this (the same test of a value, the same growth).
  private readonly column: Uint32OrFloat64Column;
  length = 0;
  constructor(capacity = 16) {
    this.column = idColumnMaker(capacity)();
  }
  push(v: number): void {
    this.column.ensure(this.length + 1);
    this.column.put(this.length++, v);
  }
  /** A view of the values (shares memory with the buffer). */
  view(): Durations {
    return this.column.trim(this.length);
  }
}

/**
 * Statistics of `values` (reordered in place). The median comes from a selection, not a sort:
 * linear time, so a kernel with millions of instances costs no more per instance than one with
 * thousands. Sums are of integers (ns) below 2^53, so exact in any order.
 */
export function durationStats(values: Durations): DurationStats {
  const n = values.length;
  if (n === 0) return { total: 0, count: 0, avg: 0, med: 0, min: 0, max: 0, stdDev: 0 };
  // Each loop in a function of its own that returns a number: V8 compiles a long loop while it
  // runs (on-stack replacement), before the code after it has run once, and that code then bails
  // out of the compiled function on every later call that enters the loop (2,516 bail-outs in one
  // report on pytorch-dense-long, when the loops were here).
  const total = sumOf(values);
  const min = smallestOf(values);
  const max = largestBefore(values, n);
  const avg = total / n;
  const sq = sumOfSquaredDeviations(values, avg);
  const mid = n >> 1;
  const upper = selectInPlace(values, mid);
  // After the selection every value left of `mid` is <= the upper middle: the lower middle is their largest.
  const med = n % 2 === 0 ? (largestBefore(values, mid) + upper) / 2 : upper;
  return { total, count: n, avg, med, min, max, stdDev: n > 1 ? Math.sqrt(sq / (n - 1)) : 0 };
}

function sumOf(values: Durations): number {
  let total = 0;
  for (let i = 0; i < values.length; i++) total += values[i];
  return total;
}

function smallestOf(values: Durations): number {
  let smallest = Infinity;
  for (let i = 0; i < values.length; i++) if (values[i] < smallest) smallest = values[i];
  return smallest;
}

function sumOfSquaredDeviations(values: Durations, avg: number): number {
  let sq = 0;
  for (let i = 0; i < values.length; i++) {
    const d = values[i] - avg;
    sq += d * d;
  }
  return sq;
}

/** The largest of `values[0..end)` (-Infinity when none). */
function largestBefore(values: Durations, end: number): number {
  let largest = -Infinity;
  for (let i = 0; i < end; i++) if (values[i] > largest) largest = values[i];
  return largest;
}

/**
 * Reorders `a` so that `a[k]` is the value a full sort would put there, smaller-or-equal values
 * before it and greater-or-equal after (quickselect, Hoare partition around a median of three;
 * runs of equal durations split evenly). Returns `a[k]`.
 */
export function selectInPlace(a: Durations, k: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (hi > lo) {
    const mid = (lo + hi) >>> 1;
    // Median of three as the pivot: sorted or reversed runs partition evenly.
    const pivot = medianOfThree(a[lo], a[mid], a[hi]);
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        const t = a[i];
        a[i] = a[j];
        a[j] = t;
        i++;
        j--;
      }
    }
    // Now a[lo..j] <= pivot <= a[i..hi], and a[j+1..i-1] == pivot.
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k];
  }
  return a[k];
}

/** The middle one of three values (no swaps through array destructuring: nothing allocated per step). */
function medianOfThree(x: number, y: number, z: number): number {
  if (x > y) {
    const t = x;
    x = y;
    y = t;
  }
  // The same comparisons as sorting the three in place, keeping only the middle one.
  if (y > z) y = z;
  return x > y ? x : y;
}

/** `Time (%)` as nsys computes it: share of the summed totals, one decimal. */
export function percentOf(part: number, whole: number): number {
  return whole > 0 ? Number(((part * 100) / whole).toFixed(1)) : 0;
}
