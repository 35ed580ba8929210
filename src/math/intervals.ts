/**
 * Interval math on typed arrays. Busy time on a device is the UNION of its GPU operations'
 * intervals (streams overlap), never the sum of their durations.
 *
 * Intervals are half-open [start, end). Zero-length and inverted intervals cover nothing.
 */

/** Merged, sorted, disjoint intervals: `starts[i] < ends[i] <= starts[i+1]`... strictly `<` after merging. */
export interface IntervalSet {
  starts: Float64Array;
  ends: Float64Array;
}

/**
 * Where the ascending runs of a[0..n) begin, then n: run r is [bounds[r], bounds[r + 1]). Null
 * when there are more than `maxRuns` (the scan stops there).
 */
export function ascendingRunBounds(a: ArrayLike<number>, n: number, maxRuns: number): number[] | null {
  const bounds = [0];
  for (let i = 1; i < n; i++) {
    if (a[i] < a[i - 1]) {
      bounds.push(i);
      if (bounds.length > maxRuns) return null;
    }
  }
  bounds.push(n);
  return bounds;
}

/** Above this many ascending runs `sortAscending` leaves the work to the engine's sort. */
const MAX_MERGED_RUNS = 8;

/**
 * Sorts `a` ascending in place (the same order as `Float64Array.prototype.sort` for the finite
 * timestamps held here) and returns it. GPU ops arrive table by table, and nsys writes each table
 * in time order: a few ascending runs (kernels, then memcpys, memsets...), each merged into the
 * sorted part before it from the back, with a copy of the run only (two full sorts of 650k values
 * were ~100 ms of `report` on dense-long). Runs after the first are short there; when one is not
 * (more than an eighth of the values), the copy would add to the peak memory (50 MB on the 10x
 * bench file), and the engine's in-place sort is used instead.
 */
export function sortAscending(a: Float64Array): Float64Array {
  const n = a.length;
  const bounds = ascendingRunBounds(a, n, MAX_MERGED_RUNS);
  if (!bounds) return a.sort();
  let longest = 0;
  for (let r = 1; r + 1 < bounds.length; r++) longest = Math.max(longest, bounds[r + 1] - bounds[r]);
  // A long later run (the values fall back early) would need a large copy: the engine's sort then.
  if (longest > n / 8) return a.sort();
  const run = new Float64Array(longest);
  for (let r = 1; r + 1 < bounds.length; r++) {
    const mid = bounds[r];
    const hi = bounds[r + 1];
    run.set(a.subarray(mid, hi));
    // [0, mid) is sorted; merge the run into it from the back (ties: the sorted part's value last, as it is equal).
    let i = mid - 1;
    let j = hi - mid - 1;
    let k = hi - 1;
    while (j >= 0) a[k--] = i >= 0 && a[i] > run[j] ? a[i--] : run[j--];
  }
  return a;
}

/**
 * Union of intervals given as parallel arrays (any order). Sorts starts and ends independently and
 * sweeps them with a depth counter, as nsys's gpu_gaps rule does: the k-th end pairs with the
 * (k+1)-th start to bound each idle gap. Touching intervals ([a,b) and [b,c)) merge.
 * The inputs are not modified.
 */
export function unionIntervals(starts: ArrayLike<number>, ends: ArrayLike<number>): IntervalSet {
  // GPU ops come table by table, each in start order: a few runs, merged by start as they are.
  const runs = ascendingRunBounds(starts, starts.length, MAX_MERGED_RUNS);
  if (runs) return unionOfStartRuns(starts, ends, runs);
  const s = new Float64Array(starts.length);
  const e = new Float64Array(starts.length);
  const m = copyNonEmpty(starts, ends, s, e);
  const ss = sortAscending(s.subarray(0, m));
  const es = sortAscending(e.subarray(0, m));
  const k = mergeSortedBounds(ss, es);
  // When most intervals stayed apart (back-to-back kernels: millions of busy intervals), views
  // avoid a second copy of both arrays at the peak; the slack is at most as large as the result.
  if (2 * k >= m) return { starts: ss.subarray(0, k), ends: es.subarray(0, k) };
  return { starts: ss.slice(0, k), ends: es.slice(0, k) };
}

/** Where a union's intervals go, one at a time in ascending order (`unionOfStartRunsInto`). */
export interface IntervalSink {
  /** `first`: the index, in the inputs, of the interval whose start this is (the first of those merged). */
  push(start: number, end: number, first: number): void;
}

/**
 * The union's intervals given in order to a sink made by `makeSink` when the starts of
 * [starts, ends) ascend in at most a few runs (GPU ops, table by table), with no copy of the
 * inputs; null (no sink made) otherwise: `unionIntervals` then sorts copies. A caller that keeps
 * the union in another form (the busy union, packed) makes it here without the two Float64 arrays
 * of `unionIntervals`.
 */
export function unionOfStartRunsInto<S extends IntervalSink>(starts: ArrayLike<number>, ends: ArrayLike<number>, makeSink: () => S): S | null {
  const runs = ascendingRunBounds(starts, starts.length, MAX_MERGED_RUNS);
  if (!runs) return null;
  const sink = makeSink();
  mergeStartRuns(starts, ends, runs, sink);
  return sink;
}

/** `IntervalSink` into two Float64 arrays of the inputs' length (at most one interval per input). */
class WideSink implements IntervalSink {
  k = 0;
  constructor(
    readonly us: Float64Array,
    readonly ue: Float64Array,
  ) {}
  push(start: number, end: number): void {
    this.us[this.k] = start;
    this.ue[this.k] = end;
    this.k++;
  }
}

/**
 * `unionIntervals` of intervals whose starts ascend within each run (`runs`: `ascendingRunBounds`):
 * the runs merged by start (ties: the earlier run first) and swept once, each interval joining the
 * current one when it starts at or before its end (touching intervals merge, as in the sweep of
 * sorted bounds). No sort and no copy of the inputs; the same set, so the same bounds.
 */
function unionOfStartRuns(starts: ArrayLike<number>, ends: ArrayLike<number>, runs: readonly number[]): IntervalSet {
  const n = starts.length;
  const sink = new WideSink(new Float64Array(n), new Float64Array(n));
  mergeStartRuns(starts, ends, runs, sink);
  const { us, ue, k } = sink;
  if (2 * k >= n) return { starts: us.subarray(0, k), ends: ue.subarray(0, k) };
  return { starts: us.slice(0, k), ends: ue.slice(0, k) };
}

/**
 * The merge and sweep of `unionOfStartRuns`, each merged interval given to `sink`. The run
 * whose next interval starts first gives its intervals up to where another run's next one starts
 * (the kernels' run gives hundreds of thousands at a time, between two memcpys), one comparison
 * each; ties between runs may go either way, the union is the same. A start that does not compare
 * (NaN) is taken alone, first: its interval has no length and is skipped.
 */
function mergeStartRuns(starts: ArrayLike<number>, ends: ArrayLike<number>, runs: readonly number[], sink: IntervalSink): void {
  const heads = runs.slice(0, runs.length - 1);
  const sweep = { open: false, start: 0, end: 0, first: -1 };
  for (;;) {
    const best = firstStartingRun(starts, runs, heads);
    if (best < 0) break;
    const from = heads[best];
    const limit = starts[from] === starts[from] ? nextStartOfOtherRuns(starts, runs, heads, best) : -Infinity;
    heads[best] = sweepRunUpTo(starts, ends, from, runs[best + 1], limit, sweep, sink);
  }
  if (sweep.open) sink.push(sweep.start, sweep.end, sweep.first);
}

/** The run with intervals left whose next one starts first (one whose next start is NaN before any); -1 when none is left. */
function firstStartingRun(starts: ArrayLike<number>, runs: readonly number[], heads: number[]): number {
  let best = -1;
  for (let r = 0; r < heads.length; r++) {
    if (heads[r] >= runs[r + 1]) continue;
    const s = starts[heads[r]];
    if (s !== s) return r;
    if (best < 0 || s < starts[heads[best]]) best = r;
  }
  return best;
}

/** The earliest next start of the runs other than `best` (+Infinity when none; -Infinity when one is NaN: it goes first). */
function nextStartOfOtherRuns(starts: ArrayLike<number>, runs: readonly number[], heads: number[], best: number): number {
  let limit = Infinity;
  for (let r = 0; r < heads.length; r++) {
    if (r === best || heads[r] >= runs[r + 1]) continue;
    const s = starts[heads[r]];
    if (s !== s) return -Infinity;
    if (s < limit) limit = s;
  }
  return limit;
}

/**
 * Sweeps intervals `from`.. of one run while they start at or before `limit` (at least one): each
 * with a length joins the open interval when it starts at or before its end, else closes it into
 * `sink`. Returns where it stopped.
 */
function sweepRunUpTo(
  starts: ArrayLike<number>,
  ends: ArrayLike<number>,
  from: number,
  to: number,
  limit: number,
  out: { open: boolean; start: number; end: number; first: number },
  sink: IntervalSink,
): number {
  let { open, start: curStart, end: curEnd, first } = out;
  let i = from;
  do {
    const s = starts[i];
    const e = ends[i];
    i++;
    if (!(e > s)) continue;
    if (open && s <= curEnd) {
      if (e > curEnd) curEnd = e;
      continue;
    }
    if (open) sink.push(curStart, curEnd, first);
    curStart = s;
    curEnd = e;
    first = i - 1;
    open = true;
  } while (i < to && starts[i] <= limit);
  out.open = open;
  out.start = curStart;
  out.end = curEnd;
  out.first = first;
  return i;
}

// The two passes of `unionIntervals` are functions of their own: each long loop is optimized once,
// and leaving it does not deoptimize code that has not run yet (the rest of one large function).

/** Copies the intervals with a length into `s` and `e`; returns how many. */
function copyNonEmpty(starts: ArrayLike<number>, ends: ArrayLike<number>, s: Float64Array, e: Float64Array): number {
  let m = 0;
  for (let i = 0; i < starts.length; i++) {
    if (ends[i] > starts[i]) {
      s[m] = starts[i];
      e[m] = ends[i];
      m++;
    }
  }
  return m;
}

/**
 * Sweeps sorted starts and ends with a depth counter; the k merged intervals are written back
 * into ss/es (returns k): when interval k closes, starts 0..k and ends 0..k have already been
 * read, so no unread value is overwritten (saves two arrays of n).
 */
function mergeSortedBounds(ss: Float64Array, es: Float64Array): number {
  const m = ss.length;
  let k = 0;
  let i = 0;
  let j = 0;
  let depth = 0;
  let curStart = 0;
  while (i < m || j < m) {
    // Starts before ends at equal times: touching intervals merge.
    if (i < m && ss[i] <= es[j]) {
      if (depth === 0) curStart = ss[i];
      depth++;
      i++;
    } else {
      depth--;
      if (depth === 0) {
        ss[k] = curStart;
        es[k] = es[j];
        k++;
      }
      j++;
    }
  }
  return k;
}

/** Total length covered by an interval set. */
export function coveredLength(set: IntervalSet): number {
  let t = 0;
  for (let i = 0; i < set.starts.length; i++) t += set.ends[i] - set.starts[i];
  return t;
}

/** Index of the first interval whose end is after `t` (binary search). */
export function firstEndingAfter(set: IntervalSet, t: number): number {
  let lo = 0;
  let hi = set.ends.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (set.ends[mid] <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Length of `set` inside [a, b). */
export function overlapLength(set: IntervalSet, a: number, b: number): number {
  if (b <= a) return 0;
  let t = 0;
  for (let i = firstEndingAfter(set, a); i < set.starts.length && set.starts[i] < b; i++) {
    t += Math.min(b, set.ends[i]) - Math.max(a, set.starts[i]);
  }
  return t;
}

/** The gaps of `set` (the complement) inside [a, b), as an interval set. */
export function gapsWithin(set: IntervalSet, a: number, b: number): IntervalSet {
  const gs: number[] = [];
  const ge: number[] = [];
  let cursor = a;
  for (let i = firstEndingAfter(set, a); i < set.starts.length && set.starts[i] < b; i++) {
    if (set.starts[i] > cursor) {
      gs.push(cursor);
      ge.push(set.starts[i]);
    }
    cursor = Math.max(cursor, set.ends[i]);
  }
  if (cursor < b) {
    gs.push(cursor);
    ge.push(b);
  }
  return { starts: Float64Array.from(gs), ends: Float64Array.from(ge) };
}

/** Intersection length of two sorted disjoint interval sets. */
export function intersectionLength(a: IntervalSet, b: IntervalSet): number {
  let i = 0;
  let j = 0;
  let t = 0;
  while (i < a.starts.length && j < b.starts.length) {
    const lo = Math.max(a.starts[i], b.starts[j]);
    const hi = Math.min(a.ends[i], b.ends[j]);
    if (hi > lo) t += hi - lo;
    if (a.ends[i] < b.ends[j]) i++;
    else j++;
  }
  return t;
}

/** The part of `set` inside [a, b), as an interval set (pieces clipped to the bounds). */
export function clipIntervals(set: IntervalSet, a: number, b: number): IntervalSet {
  const cs: number[] = [];
  const ce: number[] = [];
  if (b > a) {
    for (let i = firstEndingAfter(set, a); i < set.starts.length && set.starts[i] < b; i++) {
      const s = Math.max(a, set.starts[i]);
      const e = Math.min(b, set.ends[i]);
      if (e > s) {
        cs.push(s);
        ce.push(e);
      }
    }
  }
  return { starts: Float64Array.from(cs), ends: Float64Array.from(ce) };
}

/** Intersection of two sorted disjoint interval sets, as an interval set. */
export function intersectIntervals(a: IntervalSet, b: IntervalSet): IntervalSet {
  const cs: number[] = [];
  const ce: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.starts.length && j < b.starts.length) {
    const lo = Math.max(a.starts[i], b.starts[j]);
    const hi = Math.min(a.ends[i], b.ends[j]);
    if (hi > lo) {
      cs.push(lo);
      ce.push(hi);
    }
    if (a.ends[i] < b.ends[j]) i++;
    else j++;
  }
  return { starts: Float64Array.from(cs), ends: Float64Array.from(ce) };
}

/** `a` minus `b` (both sorted and disjoint), as an interval set. */
export function subtractIntervals(a: IntervalSet, b: IntervalSet): IntervalSet {
  const cs: number[] = [];
  const ce: number[] = [];
  let j = 0;
  for (let i = 0; i < a.starts.length; i++) {
    let cur = a.starts[i];
    const end = a.ends[i];
    while (j < b.starts.length && b.ends[j] <= cur) j++;
    let k = j;
    while (k < b.starts.length && b.starts[k] < end) {
      if (b.starts[k] > cur) {
        cs.push(cur);
        ce.push(b.starts[k]);
      }
      cur = Math.max(cur, b.ends[k]);
      if (cur >= end) break;
      k++;
    }
    if (cur < end) {
      cs.push(cur);
      ce.push(end);
    }
  }
  return { starts: Float64Array.from(cs), ends: Float64Array.from(ce) };
}
