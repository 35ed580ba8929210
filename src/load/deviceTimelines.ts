import { busyEndAt, busyLength, busyStartAt, busyUnionOf, busyUnionOverOps, type BusyIntervals } from '../math/busyIntervals.js';
import type { GpuOpColumns } from './gpuOpColumns.js';

/** One device's busy time: the union of all its GPU work on all streams and processes. */
export interface DeviceTimeline {
  deviceId: number;
  /** Sorted, disjoint busy intervals (touching ops merge; zero-length ops cover nothing). */
  busy: BusyIntervals;
  /** First busy start .. last busy end on the device. */
  spanStartNs: number;
  spanEndNs: number;
  busyNs: number;
  /** Processes with GPU work on the device, ascending. */
  pids: number[];
  opCount: number;
}

/**
 * Busy union per device from op columns. `unionOfAll`: the union of every op in `ops` when the
 * caller holds it already (with one device it is that device's union: on millions of ops its two
 * sorts dominate, and the iteration attribution needs the same union).
 */
export function computeDeviceTimelines(ops: GpuOpColumns, unionOfAll: () => BusyIntervals = () => busyUnionOverOps(ops.start, ops.end)): DeviceTimeline[] {
  const counts = new Map<number, number>();
  const pids = new Map<number, Set<number>>();
  // Ops come in runs of one device and process (one table after another): the maps are touched
  // once per run, not per op.
  let run = 0;
  let d = NaN;
  let pid = NaN;
  const endRun = () => {
    if (run === 0) return;
    counts.set(d, (counts.get(d) ?? 0) + run);
    let ps = pids.get(d);
    if (!ps) pids.set(d, (ps = new Set()));
    ps.add(pid);
  };
  for (let i = 0; i < ops.count; i++) {
    if (ops.deviceId[i] === d && ops.pid[i] === pid) {
      run++;
      continue;
    }
    endRun();
    d = ops.deviceId[i];
    pid = ops.pid[i];
    run = 1;
  }
  endRun();
  const out: DeviceTimeline[] = [];
  for (const d of [...counts.keys()].sort((a, b) => a - b)) {
    const busy = counts.size === 1 ? unionOfAll() : deviceUnion(ops, d, counts.get(d)!);
    const m = busy.count;
    out.push({
      deviceId: d,
      busy,
      spanStartNs: m ? busyStartAt(busy, 0) : 0,
      spanEndNs: m ? busyEndAt(busy, m - 1) : 0,
      busyNs: busyLength(busy),
      pids: [...pids.get(d)!].sort((a, b) => a - b),
      opCount: counts.get(d)!,
    });
  }
  return out;
}

/** The busy union of the `n` ops of device `d`. */
function deviceUnion(ops: GpuOpColumns, d: number, n: number): BusyIntervals {
  const starts = new Float64Array(n);
  const ends = new Float64Array(n);
  let k = 0;
  for (let i = 0; i < ops.count; i++) {
    if (ops.deviceId[i] !== d) continue;
    starts[k] = ops.start[i];
    ends[k] = ops.end[i];
    k++;
  }
  return busyUnionOf(starts, ends);
}

/** Number of gaps of a timeline (between consecutive busy intervals). */
export function gapCount(t: DeviceTimeline): number {
  return Math.max(0, t.busy.count - 1);
}

/** Gap `i` of a timeline: from the end of busy interval i to the start of busy interval i+1. */
export function gapAt(t: DeviceTimeline, i: number): [number, number] {
  return [busyEndAt(t.busy, i), busyStartAt(t.busy, i + 1)];
}
