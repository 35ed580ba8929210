import { GpuOpKind } from '../load/gpuOpColumns.js';
import type { LoadedExport } from '../load/loadedExport.js';
import { Float64Buffer } from '../math/durationStats.js';
import { busyUnionOf, type BusyIntervals } from '../math/busyIntervals.js';
import type { CategoryClassifier } from '../categories/rules.js';
import { StringIdTable } from '../columns/typedColumn.js';

/** An iteration's place on the timeline (one process's executor thread). */
export interface IterationWindow {
  iter: number;
  pid: number;
  tid: number;
  startNs: number;
  /** Next window's start; for the last window, when its GPU work drains (set by attribution). */
  endNs: number;
  /** API calls made in [startNs, launchEndNs) belong to this iteration. */
  launchEndNs: number;
  rangeEndNs: number | null;
  text: string;
}

/** What the GPU did for each window, by launch (API call) time. Arrays are indexed like `windows`. */
export interface GpuAttribution {
  categories: string[];
  /** windows.length x categories.length, row-major. */
  categoryNs: Float64Array;
  kernelNs: Float64Array;
  kernelCount: Float64Array;
  memcpyNs: Float64Array;
  memcpyCount: Float64Array;
  memsetNs: Float64Array;
  memsetCount: Float64Array;
  graphLaunches: Float64Array;
  /** Ops launched from threads other than the window's executor thread. */
  otherThreadOps: Float64Array;
  /** Earliest start and latest end of the GPU work launched in each window. */
  firstOpStartNs: Float64Array;
  lastOpEndNs: Float64Array;
  /** Union of GPU busy intervals per process (all its devices). */
  busyByPid: Map<number, BusyIntervals>;
  coverage: AttributionCoverage;
}

export interface AttributionCoverage {
  gpuOps: number;
  gpuOpNs: number;
  placedOps: number;
  placedNs: number;
  /** GPU rows whose API call is not in the export (time-trimmed exports). */
  noRuntimeOps: number;
  noRuntimeNs: number;
  /** API call before the first or after the last window of its process. */
  outsideOps: number;
  outsideNs: number;
  /** Ops of processes without iteration windows. */
  otherProcessOps: number;
  otherProcessNs: number;
}

/** Per process: window starts and launch ends for lookups by API-call time. */
interface ProcessWindows {
  first: number;
  starts: Float64Array;
  launchEnds: Float64Array;
  tids: Int32Array;
  /** The window the last lookup landed in (its start <= that time): where the next one looks first. */
  hint: number;
}

function indexWindows(windows: IterationWindow[]): Map<number, ProcessWindows> {
  const byPid = new Map<number, number[]>();
  windows.forEach((w, i) => {
    const list = byPid.get(w.pid) ?? [];
    list.push(i);
    byPid.set(w.pid, list);
  });
  const out = new Map<number, ProcessWindows>();
  for (const [pid, idx] of byPid) {
    // Windows of one process are consecutive in `windows` and sorted by start.
    out.set(pid, {
      first: idx[0],
      starts: Float64Array.from(idx, (i) => windows[i].startNs),
      launchEnds: Float64Array.from(idx, (i) => windows[i].launchEndNs),
      tids: Int32Array.from(idx, (i) => windows[i].tid),
      hint: -1,
    });
  }
  return out;
}

/**
 * Index (within the process) of the window whose launch interval holds `t`, or -1. Ops come in
 * table order, their calls mostly in time order: the last window found, or the next one, usually
 * holds `t` (a binary search otherwise).
 */
function windowAt(pw: ProcessWindows, t: number): number {
  const starts = pw.starts;
  const n = starts.length;
  let k = pw.hint;
  if (!startsWindow(starts, k, t)) k = startsWindow(starts, k + 1, t) ? k + 1 : lastStartAtOrBefore(starts, t);
  pw.hint = k;
  return k >= 0 && k < n && t < pw.launchEnds[k] ? k : -1;
}

/** Whether window `k` is the last one starting at or before `t`. */
export function startsWindow(starts: Float64Array, k: number, t: number): boolean {
  return k >= 0 && k < starts.length && starts[k] <= t && (k + 1 === starts.length || t < starts[k + 1]);
}

/** Index of the last window starting at or before `t` (binary search), or -1. */
export function lastStartAtOrBefore(starts: Float64Array, t: number): number {
  let lo = 0;
  let hi = starts.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (starts[mid] <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/**
 * Places every GPU operation (kernel, memcpy, memset, whole-graph launch) in the iteration whose
 * window holds its launching API call (correlationId + PID -> runtime row -> call start), sums it
 * by kind and kernel category, and builds each process's and device's busy-interval union.
 * Graph-node kernels share their cudaGraphLaunch's correlationId, so they follow the launch.
 * Work launched from other threads of the process is placed by launch time too, and counted.
 * One pass over the loaded op columns.
 */
export function attributeGpuWork(loaded: LoadedExport, windows: IterationWindow[], classifier: CategoryClassifier): GpuAttribution {
  const acc = emptyAttribution(classifier.categories, windows.length);
  const ops = loaded.gpuOps();
  if (ops.count === 0) return acc;
  // One process (the usual export: one rank): its busy union is over the op columns themselves,
  // with no per-process copy of every interval.
  let singlePid = true;
  for (let i = 1; i < ops.count && singlePid; i++) singlePid = ops.pid[i] === ops.pid[0];
  const intervalsByPid = placeGpuOps(loaded, indexWindows(windows), classifier, acc, singlePid);
  if (singlePid) acc.busyByPid.set(ops.pid[0], loaded.busyUnion());
  for (const [pid, b] of intervalsByPid) acc.busyByPid.set(pid, busyUnionOf(b.s.view(), b.e.view()));
  return acc;
}

/** Zero sums for `n` windows (first op start +Infinity, last op end -Infinity: none yet). */
function emptyAttribution(categories: string[], n: number): GpuAttribution {
  return {
    categories,
    categoryNs: new Float64Array(n * categories.length),
    kernelNs: new Float64Array(n),
    kernelCount: new Float64Array(n),
    memcpyNs: new Float64Array(n),
    memcpyCount: new Float64Array(n),
    memsetNs: new Float64Array(n),
    memsetCount: new Float64Array(n),
    graphLaunches: new Float64Array(n),
    otherThreadOps: new Float64Array(n),
    firstOpStartNs: new Float64Array(n).fill(Infinity),
    lastOpEndNs: new Float64Array(n).fill(-Infinity),
    busyByPid: new Map(),
    coverage: { gpuOps: 0, gpuOpNs: 0, placedOps: 0, placedNs: 0, noRuntimeOps: 0, noRuntimeNs: 0, outsideOps: 0, outsideNs: 0, otherProcessOps: 0, otherProcessNs: 0 },
  };
}

/** A kernel name id's category (index in `classifier.categories`), classified once per id. */
function kernelCategoryLookup(loaded: LoadedExport, classifier: CategoryClassifier): (nameId: number) => number {
  const categories = new StringIdTable(loaded.rowBound('StringIds'));
  return (nameId) => {
    let cat = categories.get(nameId);
    if (cat < 0) {
      cat = classifier.classify(loaded.stringOf(nameId) ?? '');
      categories.set(nameId, cat);
    }
    return cat;
  };
}

/** `placeGpuOps`' category of a kind whose ops take the category of their kernel's name. */
const BY_KERNEL_NAME = -2;

/** GPU op intervals by process, in op order. */
type IntervalsByPid = Map<number, { s: Float64Buffer; e: Float64Buffer }>;

/**
 * The pass over the op columns: each op counted in coverage, and added to the sums of the window
 * holding its API call. Unless `singlePid`, returns every op's interval by process (for the busy
 * unions); else an empty map.
 */
function placeGpuOps(loaded: LoadedExport, byPid: Map<number, ProcessWindows>, classifier: CategoryClassifier, acc: GpuAttribution, singlePid: boolean): IntervalsByPid {
  const ops = loaded.gpuOps();
  const api = loaded.apiCalls();
  const calls = loaded.apiCallIndex();
  const nc = acc.categories.length;
  const categoryOf = kernelCategoryLookup(loaded, classifier);
  const graphCategory = classifier.classify('[CUDA graph]');
  // Per `GpuOpKind` (kernel, memcpy, memset, graph): the sums its time and count go to, and its
  // category (a kernel's by its name, none for memcpy and memset: -1). A whole-graph launch
  // stands for the kernels it ran (graph-level trace): its time adds to the kernels'.
  const nsOf: Float64Array[] = [];
  const countOf: Float64Array[] = [];
  const categoryOfKind: number[] = [];
  for (const [kind, ns, count, category] of [
    [GpuOpKind.Kernel, acc.kernelNs, acc.kernelCount, BY_KERNEL_NAME],
    [GpuOpKind.Memcpy, acc.memcpyNs, acc.memcpyCount, -1],
    [GpuOpKind.Memset, acc.memsetNs, acc.memsetCount, -1],
    [GpuOpKind.Graph, acc.kernelNs, acc.graphLaunches, graphCategory],
  ] as const) {
    nsOf[kind] = ns;
    countOf[kind] = count;
    categoryOfKind[kind] = category;
  }
  const intervalsByPid: IntervalsByPid = new Map();
  const cov = acc.coverage;
  // The process's windows, looked up once per run of its ops.
  let lastPid = NaN;
  let pw: ProcessWindows | undefined;
  for (let i = 0; i < ops.count; i++) {
    const start = ops.start[i];
    const end = ops.end[i];
    const pid = ops.pid[i];
    const dur = end - start;
    cov.gpuOps++;
    cov.gpuOpNs += dur;
    if (!singlePid) {
      let b = intervalsByPid.get(pid);
      if (!b) intervalsByPid.set(pid, (b = { s: new Float64Buffer(4096), e: new Float64Buffer(4096) }));
      b.s.push(start);
      b.e.push(end);
    }
    if (pid !== lastPid) {
      lastPid = pid;
      pw = byPid.get(pid);
    }
    if (!pw) {
      cov.otherProcessOps++;
      cov.otherProcessNs += dur;
      continue;
    }
    const ci = calls.lookup(pid, ops.correlationId[i]);
    if (ci < 0) {
      cov.noRuntimeOps++;
      cov.noRuntimeNs += dur;
      continue;
    }
    const k = windowAt(pw, api.start[ci]);
    if (k < 0) {
      cov.outsideOps++;
      cov.outsideNs += dur;
      continue;
    }
    const w = pw.first + k;
    cov.placedOps++;
    cov.placedNs += dur;
    if (api.tid[ci] !== pw.tids[k]) acc.otherThreadOps[w]++;
    if (start < acc.firstOpStartNs[w]) acc.firstOpStartNs[w] = start;
    if (end > acc.lastOpEndNs[w]) acc.lastOpEndNs[w] = end;
    // By kind through lookups, not a switch: a capture's memcpy and memset rows come after all its
    // kernels, and code first run then would deoptimize the loop's optimized code (twice).
    const kind = ops.kind[i];
    nsOf[kind][w] += dur;
    countOf[kind][w]++;
    const fixed = categoryOfKind[kind];
    const category = fixed === BY_KERNEL_NAME ? categoryOf(ops.nameId[i]) : fixed;
    if (category >= 0) acc.categoryNs[w * nc + category] += dur;
  }
  return intervalsByPid;
}
