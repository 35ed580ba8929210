import type { CpuOpColumns, LaunchCallColumns } from '../load/kinetoReads.js';

export type { CpuOpColumns, LaunchCallColumns };

/**
 * The host side nsys cannot give, from the PyTorch profiler's aten ops: per iteration, CPU time by
 * op (self time), launch calls and the aten op each was made in, GPU time by the op that launched
 * it, and the time from the iteration's first op to its first kernel. Shared by a Kineto trace on
 * its own (`analyzeAtenOps`) and by dual mode, where the ops come from Kineto and the launches,
 * kernels and iterations from nsys (`attachTorchTrace`), with the ops shifted onto nsys's clock.
 */

/** Last index in [lo, hi] whose start is <= t, or lo - 1. */
function lastStartingBy(start: Float64Array, lo: number, hi: number, t: number): number {
  let a = lo;
  let b = hi;
  let found = lo - 1;
  while (a <= b) {
    const m = (a + b) >> 1;
    if (start[m] <= t) {
      found = m;
      a = m + 1;
    } else b = m - 1;
  }
  return found;
}

/**
 * The innermost op of thread `pid:tid` containing [t0, t1] (op times plus `shiftNs`), or -1. The
 * last op starting by t0 is the innermost container or a descendant of it, so its ancestors are
 * the only candidates.
 */
export function innermostOp(ops: CpuOpColumns, pid: number, tid: number, t0: number, t1: number, shiftNs = 0): number {
  const range = ops.threads.get(`${pid}:${tid}`);
  if (!range) return -1;
  let i = lastStartingBy(ops.start, range[0], range[1], t0 - shiftNs);
  while (i >= range[0] && i >= 0) {
    if (ops.end[i] + shiftNs >= t1) return ops.start[i] + shiftNs <= t0 ? i : -1;
    i = ops.parent[i];
  }
  return -1;
}

/** An iteration's place on the timeline the launches are on (nsys's in dual mode). */
export interface HostWindow {
  iter: number;
  pid: number;
  startNs: number;
  endNs: number;
}

export interface OpTime {
  name: string;
  /** CPU self time (ns). */
  selfNs: number;
  count: number;
}

export interface OpGpuTime {
  name: string;
  /** Kernel time (ns) of the kernels launched from inside the op. */
  kernelNs: number;
  kernels: number;
}

export interface IterationHostSide {
  iter: number;
  /** Outermost aten ops' time started in the window (CPU time inside aten ops). */
  cpuOpNs: number;
  opCount: number;
  /** By self time, most first (at most `topN`). */
  topOps: OpTime[];
  /** Kernel-launch calls (cudaLaunchKernel, cuLaunchKernel*) made in the window. */
  launchCalls: number;
  /** Those made inside an aten op. */
  attributedLaunchCalls: number;
  /** Graph launches (cudaGraphLaunch), counted apart. */
  graphLaunches: number;
  attributedGraphLaunches: number;
  /** GPU time by the aten op whose launch call started it, most first (at most `topN`). */
  gpuTimeByOp: OpGpuTime[];
  firstOpStartNs: number | null;
  firstLaunchStartNs: number | null;
  /** GPU start of the first kernel launched in the window. */
  firstKernelStartNs: number | null;
  /** From the first aten op's start to the first kernel's GPU start: host time before the GPU gets work. */
  firstOpToFirstKernelNs: number | null;
}

/** Aten-op CPU time over a group of iterations (a batch phase). */
export interface GroupHostSide {
  group: string;
  iterations: number;
  cpuOpNs: number;
  launchCalls: number;
  attributedLaunchCalls: number;
  /** By self time over the group's iterations, most first (at most `topN`). */
  topOps: OpTime[];
}

export interface HostSideTotals {
  launchCalls: number;
  attributedLaunchCalls: number;
  graphLaunches: number;
  attributedGraphLaunches: number;
  /** Share of kernel-launch calls in iterations made inside an aten op (0..1; null without calls). */
  attributedShare: number | null;
}

/** Pseudo name ids for GPU time whose launch was not made inside an aten op. */
const OUTSIDE_OPS = -1;
const GRAPH_LAUNCH = -2;

function windowOf(windows: readonly HostWindow[], pid: number | null, t: number): number {
  // Windows are few (hundreds to thousands) and sorted by start: binary search, then check.
  let a = 0;
  let b = windows.length - 1;
  let found = -1;
  while (a <= b) {
    const m = (a + b) >> 1;
    if (windows[m].startNs <= t) {
      found = m;
      a = m + 1;
    } else b = m - 1;
  }
  for (let i = found; i >= 0 && i >= found - 8; i--) {
    const w = windows[i];
    if (t >= w.startNs && t < w.endNs && (pid === null || w.pid === pid)) return i;
  }
  return -1;
}

/** Per window (iteration): what its aten ops and launch calls add up to. */
interface OpsByWindow {
  /** Per window: self time and count by op name id. */
  byName: Map<number, { selfNs: number; count: number }>[];
  cpuOpNs: Float64Array;
  opCount: Float64Array;
  /** Start of the window's first op (Infinity: none). */
  firstOp: Float64Array;
}

interface LaunchesByWindow {
  launchCalls: Float64Array;
  attributed: Float64Array;
  graphLaunches: Float64Array;
  attributedGraph: Float64Array;
  /** Start and correlation id of the window's first launch call (Infinity, NaN: none). */
  firstLaunch: Float64Array;
  firstLaunchCorr: Float64Array;
  /** Launch (`pid:correlationId`) -> [window, op name id]: which op launched each kernel. */
  launchOp: Map<string, [number, number]>;
}

type KernelColumns = { correlationId: Float64Array; pid: Int32Array; start: Float64Array; end: Float64Array; count: number };

/**
 * Per window: aten-op CPU time (ops shifted by `shiftNs` onto the launches' clock), launch calls
 * and their containing op, GPU time by op (kernels from `kernels`, keyed by the launch's
 * correlation id and pid), first op to first kernel.
 */
export function hostSideByIteration(
  ops: CpuOpColumns,
  launches: LaunchCallColumns,
  kernels: KernelColumns,
  windowsIn: readonly HostWindow[],
  opts: { shiftNs?: number; topN?: number; groupOf?: (iter: number) => string | null } = {},
): { iterations: IterationHostSide[]; totals: HostSideTotals; groups: GroupHostSide[] } {
  const shift = opts.shiftNs ?? 0;
  const topN = opts.topN ?? 5;
  const windows = [...windowsIn].sort((a, b) => a.startNs - b.startNs);
  const byOps = opsByWindow(ops, windows, shift);
  const byLaunch = launchesByWindow(ops, launches, windows, shift);
  const { gpuByOp, firstKernel } = gpuTimeByLaunchingOp(kernels, windows, byLaunch);
  const name = (id: number) => (id === GRAPH_LAUNCH ? '(CUDA graph launch)' : id === OUTSIDE_OPS ? '(outside any aten op)' : (ops.names.get(id) ?? `#${id}`));
  const fin = (v: number) => (Number.isFinite(v) ? v : null);
  const iterations = windows.map((win, w): IterationHostSide => {
    const top = [...byOps.byName[w]].map(([id, v]) => ({ name: name(id), selfNs: v.selfNs, count: v.count })).sort((a, b) => b.selfNs - a.selfNs);
    const gpu = [...gpuByOp[w]].map(([id, v]) => ({ name: name(id), kernelNs: v.kernelNs, kernels: v.kernels })).sort((a, b) => b.kernelNs - a.kernelNs);
    const fo = fin(byOps.firstOp[w]);
    const fk = fin(firstKernel[w]);
    return {
      iter: win.iter,
      cpuOpNs: byOps.cpuOpNs[w],
      opCount: byOps.opCount[w],
      topOps: top.slice(0, topN),
      launchCalls: byLaunch.launchCalls[w],
      attributedLaunchCalls: byLaunch.attributed[w],
      graphLaunches: byLaunch.graphLaunches[w],
      attributedGraphLaunches: byLaunch.attributedGraph[w],
      gpuTimeByOp: gpu.slice(0, topN),
      firstOpStartNs: fo,
      firstLaunchStartNs: fin(byLaunch.firstLaunch[w]),
      firstKernelStartNs: fk,
      firstOpToFirstKernelNs: fo !== null && fk !== null ? fk - fo : null,
    };
  });
  const groups = opts.groupOf ? groupRows(windows, opts.groupOf, byOps, byLaunch, name, topN) : [];
  return { iterations, totals: launchTotals(byLaunch), groups };
}

/** Each aten op (start shifted onto the launches' clock) in the window it starts in. */
function opsByWindow(ops: CpuOpColumns, windows: readonly HostWindow[], shift: number): OpsByWindow {
  const nw = windows.length;
  const opPids = new Set(ops.pid);
  const byName = Array.from({ length: nw }, () => new Map<number, { selfNs: number; count: number }>());
  const cpuOpNs = new Float64Array(nw);
  const opCount = new Float64Array(nw);
  const firstOp = new Float64Array(nw).fill(Infinity);
  for (let i = 0; i < ops.count; i++) {
    const t = ops.start[i] + shift;
    const w = windowOf(windows, opPids.has(windows[0]?.pid ?? -1) ? ops.pid[i] : null, t);
    if (w < 0) continue;
    const m = byName[w];
    const cur = m.get(ops.nameId[i]);
    if (cur) {
      cur.selfNs += ops.selfNs[i];
      cur.count++;
    } else m.set(ops.nameId[i], { selfNs: ops.selfNs[i], count: 1 });
    if (ops.depth[i] === 0) cpuOpNs[w] += ops.end[i] - ops.start[i];
    opCount[w]++;
    if (t < firstOp[w]) firstOp[w] = t;
  }
  return { byName, cpuOpNs, opCount, firstOp };
}

/** Each launch call in its window, counted with or without an aten op around it, and the op it was made in. */
function launchesByWindow(ops: CpuOpColumns, launches: LaunchCallColumns, windows: readonly HostWindow[], shift: number): LaunchesByWindow {
  const nw = windows.length;
  const launchCalls = new Float64Array(nw);
  const attributed = new Float64Array(nw);
  const graphLaunches = new Float64Array(nw);
  const attributedGraph = new Float64Array(nw);
  const firstLaunch = new Float64Array(nw).fill(Infinity);
  const firstLaunchCorr = new Float64Array(nw).fill(NaN);
  const launchOp = new Map<string, [number, number]>();
  for (let i = 0; i < launches.count; i++) {
    const w = windowOf(windows, launches.pid[i], launches.start[i]);
    if (w < 0) continue;
    const op = innermostOp(ops, launches.pid[i], launches.tid[i], launches.start[i], launches.end[i], shift);
    if (launches.isGraph[i]) {
      graphLaunches[w]++;
      if (op >= 0) attributedGraph[w]++;
    } else {
      launchCalls[w]++;
      if (op >= 0) attributed[w]++;
    }
    if (launches.start[i] < firstLaunch[w]) {
      firstLaunch[w] = launches.start[i];
      firstLaunchCorr[w] = launches.correlationId[i];
    }
    const opName = op >= 0 ? ops.nameId[op] : launches.isGraph[i] ? GRAPH_LAUNCH : OUTSIDE_OPS;
    if (!Number.isNaN(launches.correlationId[i])) launchOp.set(`${launches.pid[i]}:${launches.correlationId[i]}`, [w, opName]);
  }
  return { launchCalls, attributed, graphLaunches, attributedGraph, firstLaunch, firstLaunchCorr, launchOp };
}

/** Per window, kernel time by the op whose launch started it, and the GPU start of the window's first launch's kernel. */
function gpuTimeByLaunchingOp(
  kernels: KernelColumns,
  windows: readonly HostWindow[],
  byLaunch: LaunchesByWindow,
): { gpuByOp: Map<number, { kernelNs: number; kernels: number }>[]; firstKernel: Float64Array } {
  const nw = windows.length;
  const { launchOp, firstLaunchCorr } = byLaunch;
  const gpuByOp = Array.from({ length: nw }, () => new Map<number, { kernelNs: number; kernels: number }>());
  const firstKernel = new Float64Array(nw).fill(Infinity);
  const firstCorrKey = new Map<string, number>();
  for (let w = 0; w < nw; w++) if (!Number.isNaN(firstLaunchCorr[w])) firstCorrKey.set(`${windows[w].pid}:${firstLaunchCorr[w]}`, w);
  for (let k = 0; k < kernels.count; k++) {
    const key = `${kernels.pid[k]}:${kernels.correlationId[k]}`;
    const hit = launchOp.get(key);
    if (hit) {
      const [w, nameId] = hit;
      const m = gpuByOp[w];
      const cur = m.get(nameId);
      const ns = kernels.end[k] - kernels.start[k];
      if (cur) {
        cur.kernelNs += ns;
        cur.kernels++;
      } else m.set(nameId, { kernelNs: ns, kernels: 1 });
    }
    const fw = firstCorrKey.get(key);
    if (fw !== undefined && kernels.start[k] < firstKernel[fw]) firstKernel[fw] = kernels.start[k];
  }
  return { gpuByOp, firstKernel };
}

/** Per group (phase): the full per-iteration op maps summed, so the top ops are exact. */
function groupRows(
  windows: readonly HostWindow[],
  groupOf: (iter: number) => string | null,
  byOps: OpsByWindow,
  byLaunch: LaunchesByWindow,
  name: (id: number) => string,
  topN: number,
): GroupHostSide[] {
  const groups = new Map<string, { iterations: number; cpuOpNs: number; launchCalls: number; attributed: number; ops: Map<number, { selfNs: number; count: number }> }>();
  windows.forEach((win, w) => {
    const key = groupOf(win.iter);
    if (key === null) return;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { iterations: 0, cpuOpNs: 0, launchCalls: 0, attributed: 0, ops: new Map() }));
    g.iterations++;
    g.cpuOpNs += byOps.cpuOpNs[w];
    g.launchCalls += byLaunch.launchCalls[w];
    g.attributed += byLaunch.attributed[w];
    for (const [id, v] of byOps.byName[w]) {
      const cur = g.ops.get(id);
      if (cur) {
        cur.selfNs += v.selfNs;
        cur.count += v.count;
      } else g.ops.set(id, { ...v });
    }
  });
  return [...groups].map(([group, g]) => ({
    group,
    iterations: g.iterations,
    cpuOpNs: g.cpuOpNs,
    launchCalls: g.launchCalls,
    attributedLaunchCalls: g.attributed,
    topOps: [...g.ops]
      .map(([id, v]) => ({ name: name(id), selfNs: v.selfNs, count: v.count }))
      .sort((a, b) => b.selfNs - a.selfNs)
      .slice(0, topN),
  }));
}

/** Launch calls over every window. */
function launchTotals(byLaunch: LaunchesByWindow): HostSideTotals {
  const sum = (a: Float64Array) => a.reduce((x, y) => x + y, 0);
  return {
    launchCalls: sum(byLaunch.launchCalls),
    attributedLaunchCalls: sum(byLaunch.attributed),
    graphLaunches: sum(byLaunch.graphLaunches),
    attributedGraphLaunches: sum(byLaunch.attributedGraph),
    attributedShare: sum(byLaunch.launchCalls) > 0 ? sum(byLaunch.attributed) / sum(byLaunch.launchCalls) : null,
  };
}
