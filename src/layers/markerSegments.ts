import type { ModuleMarkerRows } from '../load/moduleMarkerReads.js';
import { moduleRefOf, modulePathOf } from './moduleRefs.js';
import type { ModuleRef } from './types.js';

/**
 * One thread's module ranges flattened into disjoint segments, each labelled with the innermost
 * range over it: a launch call's time then finds its module with one binary search.
 */
interface ThreadSegments {
  start: Float64Array;
  end: Float64Array;
  /** Index into `MarkerSegments.modules`. */
  module: Int32Array;
}

/** Module markers by thread (`pid * 2^24 + tid`), ready for lookups by launch time. */
export interface MarkerSegments {
  modules: ModuleRef[];
  byThread: Map<number, ThreadSegments>;
  /** Marker ranges read (with a module path). */
  ranges: number;
}

const TWO_24 = 16777216;

/** The segments of `rows` (ranges whose text has no module path are left out). */
export function markerSegments(rows: ModuleMarkerRows): MarkerSegments {
  const modules: ModuleRef[] = [];
  const moduleOfText = rows.texts.map((t) => {
    const path = modulePathOf(t);
    return path === null ? -1 : modules.push(moduleRefOf(path)) - 1;
  });
  const byKey = new Map<number, number[]>();
  let ranges = 0;
  for (let i = 0; i < rows.count; i++) {
    if (moduleOfText[rows.text[i]] < 0) continue;
    ranges++;
    const key = rows.pid[i] * TWO_24 + rows.tid[i];
    let list = byKey.get(key);
    if (!list) byKey.set(key, (list = []));
    list.push(i);
  }
  const byThread = new Map<number, ThreadSegments>();
  for (const [key, list] of byKey) byThread.set(key, flatten(rows, list, (i) => moduleOfText[rows.text[i]]));
  return { modules, byThread, ranges };
}

/**
 * Nested ranges (push/pop on one thread) as disjoint innermost segments: sorted by start (the
 * longer first on a tie: the outer), swept with a stack of open ranges.
 */
function flatten(rows: ModuleMarkerRows, list: number[], moduleOf: (row: number) => number): ThreadSegments {
  list.sort((a, b) => rows.start[a] - rows.start[b] || rows.end[b] - rows.end[a]);
  const s: number[] = [];
  const e: number[] = [];
  const m: number[] = [];
  const emit = (from: number, to: number, row: number) => {
    if (to <= from) return;
    s.push(from);
    e.push(to);
    m.push(moduleOf(row));
  };
  const stack: number[] = [];
  let cursor = -Infinity;
  const closeUntil = (t: number) => {
    while (stack.length && rows.end[stack[stack.length - 1]] <= t) {
      const top = stack.pop()!;
      emit(cursor, rows.end[top], top);
      cursor = Math.max(cursor, rows.end[top]);
    }
  };
  for (const r of list) {
    closeUntil(rows.start[r]);
    if (stack.length) emit(cursor, rows.start[r], stack[stack.length - 1]);
    cursor = rows.start[r];
    stack.push(r);
  }
  closeUntil(Infinity);
  return { start: Float64Array.from(s), end: Float64Array.from(e), module: Int32Array.from(m) };
}

/** The innermost module over time `t` on thread (`pid`, `tid`), or -1. */
export function moduleAt(seg: MarkerSegments, pid: number, tid: number, t: number): number {
  const th = seg.byThread.get(pid * TWO_24 + tid);
  if (!th) return -1;
  let lo = 0;
  let hi = th.start.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (th.start[mid] <= t) lo = mid + 1;
    else hi = mid;
  }
  const k = lo - 1;
  return k >= 0 && t < th.end[k] ? th.module[k] : -1;
}
