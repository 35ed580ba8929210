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
  /** What the ranges are: the PyTorch profiler's module spans, or layerwise NVTX markers. */
  source: 'torch-modules' | 'layerwise-nvtx';
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
  const within = withinLayer(modules);
  for (const [key, list] of byKey) byThread.set(key, flatten(rows, list, (i) => moduleOfText[rows.text[i]], within, (i) => modules[moduleOfText[rows.text[i]]]));
  const torch = rows.texts.some((t) => t.startsWith('nn.Module: '));
  return { modules, byThread, ranges, source: torch ? 'torch-modules' : 'layerwise-nvtx' };
}

/**
 * A module without a layer index of its own inside a range that has one (a PyTorch-profiler
 * `Attention_3` span inside `DecoderLayer_3`'s): that module in that layer, added to `modules`
 * once per pair.
 */
function withinLayer(modules: ModuleRef[]): (module: number, layer: number) => number {
  const made = new Map<string, number>();
  return (module, layer) => {
    const key = `${module}:${layer}`;
    let m = made.get(key);
    if (m === undefined) made.set(key, (m = modules.push({ ...modules[module], layer }) - 1));
    return m;
  };
}

/**
 * Nested ranges (push/pop on one thread) as disjoint innermost segments: sorted by start (the
 * longer first on a tie: the outer), swept with a stack of open ranges.
 */
function flatten(rows: ModuleMarkerRows, list: number[], moduleOf: (row: number) => number, within: (module: number, layer: number) => number, refOf: (row: number) => ModuleRef): ThreadSegments {
  list.sort((a, b) => rows.start[a] - rows.start[b] || rows.end[b] - rows.end[a]);
  const s: number[] = [];
  const e: number[] = [];
  const m: number[] = [];
  const stack: number[] = [];
  // The layer of the innermost range on the stack (below `row`) that names one, or null.
  const layerAround = (row: number): number | null => {
    for (let k = stack.length - 1; k >= 0; k--) {
      const layer = refOf(stack[k]).layer;
      if (stack[k] !== row && layer !== null) return layer;
    }
    return null;
  };
  const emit = (from: number, to: number, row: number) => {
    if (to <= from) return;
    s.push(from);
    e.push(to);
    const mod = moduleOf(row);
    const around = refOf(row).layer === null ? layerAround(row) : null;
    m.push(around === null ? mod : within(mod, around));
  };
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
