import { lastStartAtOrBefore, startsWindow } from '../iterations/attribute.js';
import { GpuOpKind } from '../load/gpuOpColumns.js';
import type { LoadedExport } from '../load/loadedExport.js';
import type { IdArray } from '../columns/typedColumn.js';

/** A step's window for launches: calls of `pid` made in [startNs, launchEndNs) belong to it. */
export interface LaunchWindow {
  pid: number;
  startNs: number;
  launchEndNs: number;
}

/**
 * The kernels (and whole-graph launches) of each step, by launch: in CSR form, step s's ops are
 * `ops[offsets[s] .. offsets[s + 1])`, in launch order (correlation id, then start: graph-node
 * kernels share their graph launch's id and run in start order), with each op's API call row.
 */
export interface StepKernels {
  offsets: Int32Array;
  ops: Int32Array;
  calls: Int32Array;
}

/**
 * Places every kernel in the step whose launch window holds its API call, as the iteration
 * attribution does (src/iterations/attribute.ts: correlationId + pid -> call -> window), one pass
 * over the op columns; then orders each step's ops by launch.
 */
export function kernelsByStep(loaded: LoadedExport, windows: readonly LaunchWindow[]): StepKernels {
  const ops = loaded.gpuOps();
  const api = loaded.apiCalls();
  const index = loaded.apiCallIndex();
  const byPid = windowsByPid(windows);
  const stepOf = new Int32Array(ops.count).fill(-1);
  const callOf = new Int32Array(ops.count);
  const counts = new Int32Array(windows.length + 1);
  let lastPid = NaN;
  let pw: PidWindows | undefined;
  for (let i = 0; i < ops.count; i++) {
    const kind = ops.kind[i];
    if (kind !== GpuOpKind.Kernel && kind !== GpuOpKind.Graph) continue;
    if (ops.pid[i] !== lastPid) {
      lastPid = ops.pid[i];
      pw = byPid.get(lastPid);
    }
    if (!pw) continue;
    const ci = index.lookup(lastPid, ops.correlationId[i]);
    if (ci < 0) continue;
    const s = windowAt(pw, api.start[ci]);
    if (s < 0) continue;
    stepOf[i] = s;
    callOf[i] = ci;
    counts[s + 1]++;
  }
  const offsets = new Int32Array(windows.length + 1);
  for (let s = 0; s < windows.length; s++) offsets[s + 1] = offsets[s] + counts[s + 1];
  const fill = offsets.slice(0, windows.length);
  const list = new Int32Array(offsets[windows.length]);
  const calls = new Int32Array(list.length);
  for (let i = 0; i < ops.count; i++) {
    const s = stepOf[i];
    if (s < 0) continue;
    list[fill[s]] = i;
    calls[fill[s]++] = callOf[i];
  }
  for (let s = 0; s < windows.length; s++) sortByLaunch(list, calls, offsets[s], offsets[s + 1], ops.correlationId, ops.start);
  return { offsets, ops: list, calls };
}

/** One process's windows (their indices in the step list), by start. */
interface PidWindows {
  index: Int32Array;
  starts: Float64Array;
  ends: Float64Array;
  hint: number;
}

function windowsByPid(windows: readonly LaunchWindow[]): Map<number, PidWindows> {
  const lists = new Map<number, number[]>();
  windows.forEach((w, i) => {
    const l = lists.get(w.pid);
    if (l) l.push(i);
    else lists.set(w.pid, [i]);
  });
  const out = new Map<number, PidWindows>();
  for (const [pid, l] of lists) {
    l.sort((a, b) => windows[a].startNs - windows[b].startNs);
    out.set(pid, { index: Int32Array.from(l), starts: Float64Array.from(l, (i) => windows[i].startNs), ends: Float64Array.from(l, (i) => windows[i].launchEndNs), hint: 0 });
  }
  return out;
}

/** The step whose launch window holds `t`, or -1: the last hit first (ops come in launch order), else a binary search. */
function windowAt(pw: PidWindows, t: number): number {
  let k = pw.hint;
  if (!startsWindow(pw.starts, k, t)) {
    k = lastStartAtOrBefore(pw.starts, t);
    if (k < 0) return -1;
    pw.hint = k;
  }
  return t < pw.ends[k] ? pw.index[k] : -1;
}

/** Sorts `list[from..to)` (with `calls` alongside) by correlation id, then start; usually sorted already. */
function sortByLaunch(list: Int32Array, calls: Int32Array, from: number, to: number, corr: IdArray, start: Float64Array): void {
  const before = (a: number, b: number) => corr[a] < corr[b] || (corr[a] === corr[b] && start[a] < start[b]);
  let sorted = true;
  for (let k = from + 1; k < to && sorted; k++) if (before(list[k], list[k - 1])) sorted = false;
  if (sorted) return;
  const idx = Array.from({ length: to - from }, (_, k) => k + from);
  idx.sort((x, y) => corr[list[x]] - corr[list[y]] || start[list[x]] - start[list[y]]);
  const l = idx.map((k) => list[k]);
  const c = idx.map((k) => calls[k]);
  list.set(l, from);
  calls.set(c, from);
}
