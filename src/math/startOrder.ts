import { ascendingRunBounds } from './intervals.js';

/** Above this many ascending runs the merge gives way to a comparator sort. */
const MAX_MERGED_RUNS = 32;

/** The indices 0..n-1 of `start` in ascending start order, ties in index order (a stable sort). */
export function orderByStart(start: Float64Array, n = start.length): Uint32Array {
  const order = new Uint32Array(n);
  let k = 0;
  forEachInStartOrder(start, n, (i) => (order[k++] = i));
  return order;
}

/**
 * Calls `visit` with each index 0..n-1 of `start` in ascending start order, ties in index order
 * (a stable sort), without an n-sized order array in the common case.
 *
 * The GPU-op columns arrive as one ascending run per table (nsys writes every activity table in
 * start order: checked on all fixtures), so the runs are merged through a small heap of run
 * heads, O(n log k), with no copy of the values (on the 10x export an order array would hold
 * 26 MB for the whole trace). Past `MAX_MERGED_RUNS` runs (an export written out of order) it
 * visits a comparator sort of the indices.
 */
export function forEachInStartOrder(start: Float64Array, n: number, visit: (i: number) => void): void {
  const bounds = ascendingRunBounds(start, n, MAX_MERGED_RUNS);
  if (!bounds) {
    for (const j of sortIndices(start, new Uint32Array(n))) visit(j);
    return;
  }
  const runs = bounds.length - 1;
  if (runs <= 1) {
    for (let i = 0; i < n; i++) visit(i);
    return;
  }
  // head[r]: next index of run r; the heap holds run numbers ordered by (start[head], head).
  const head = bounds.slice(0, runs);
  const stop = bounds.slice(1);
  const heap: number[] = [];
  const before = (a: number, b: number): boolean => {
    const sa = start[head[a]];
    const sb = start[head[b]];
    return sa < sb || (sa === sb && head[a] < head[b]);
  };
  const siftDown = (k: number): void => {
    const len = heap.length;
    for (;;) {
      const l = 2 * k + 1;
      if (l >= len) return;
      const r = l + 1;
      const m = r < len && before(heap[r], heap[l]) ? r : l;
      if (!before(heap[m], heap[k])) return;
      [heap[m], heap[k]] = [heap[k], heap[m]];
      k = m;
    }
  };
  for (let r = 0; r < runs; r++) if (head[r] < stop[r]) heap.push(r);
  for (let k = (heap.length >> 1) - 1; k >= 0; k--) siftDown(k);
  while (heap.length > 0) {
    const r = heap[0];
    // Drain run r while it stays ahead of the next-best run (long stretches of one table).
    const second = heap.length > 1 ? (heap.length > 2 && before(heap[2], heap[1]) ? heap[2] : heap[1]) : -1;
    do {
      visit(head[r]++);
    } while (head[r] < stop[r] && (second < 0 || before(r, second)));
    if (head[r] < stop[r]) siftDown(0);
    else {
      const last = heap.pop()!;
      if (heap.length > 0) {
        heap[0] = last;
        siftDown(0);
      }
    }
  }
}

function sortIndices(start: Float64Array, order: Uint32Array): Uint32Array {
  for (let i = 0; i < order.length; i++) order[i] = i;
  return order.sort((a, b) => start[a] - start[b] || a - b);
}
