import type { ExportHandle } from '../../queries/handle.js';
import { GPU_OP_KIND_NAMES } from '../../queries/gpuOps.js';
import { filterDevice, loadGpuOpColumns, type GpuOpColumns } from '../analysis/gpuOpColumns.js';

export type { GpuOpColumns };
import { coveredLength, unionIntervals, type IntervalSet } from '../analysis/intervals.js';

/** One device's busy time: the union of all its GPU work on all streams and processes. */
export interface DeviceTimeline {
  deviceId: number;
  /** Sorted, disjoint busy intervals (touching ops merge; zero-length ops cover nothing). */
  busy: IntervalSet;
  /** First busy start .. last busy end on the device. */
  spanStartNs: number;
  spanEndNs: number;
  busyNs: number;
  /** Processes with GPU work on the device, ascending. */
  pids: number[];
  opCount: number;
}

/**
 * The GPU ops (see `loadGpuOpColumns`) and the busy union of each device. Pass `ops` already
 * loaded (by the iterations analysis) to avoid a second scan.
 */
export function loadGpuTimelines(handle: ExportHandle, opts: { deviceId?: number; ops?: GpuOpColumns } = {}): { ops: GpuOpColumns; devices: DeviceTimeline[] } {
  const ops = opts.ops ? (opts.deviceId === undefined ? opts.ops : filterDevice(opts.ops, opts.deviceId)) : loadGpuOpColumns(handle, { deviceId: opts.deviceId });
  return { ops, devices: deviceTimelines(ops) };
}

/** Busy union per device from op columns. */
export function deviceTimelines(ops: GpuOpColumns): DeviceTimeline[] {
  const counts = new Map<number, number>();
  const pids = new Map<number, Set<number>>();
  for (let i = 0; i < ops.count; i++) {
    const d = ops.deviceId[i];
    counts.set(d, (counts.get(d) ?? 0) + 1);
    let ps = pids.get(d);
    if (!ps) pids.set(d, (ps = new Set()));
    ps.add(ops.pid[i]);
  }
  const out: DeviceTimeline[] = [];
  for (const d of [...counts.keys()].sort((a, b) => a - b)) {
    let starts: Float64Array;
    let ends: Float64Array;
    if (counts.size === 1) {
      starts = ops.start;
      ends = ops.end;
    } else {
      starts = new Float64Array(counts.get(d)!);
      ends = new Float64Array(counts.get(d)!);
      let k = 0;
      for (let i = 0; i < ops.count; i++) {
        if (ops.deviceId[i] !== d) continue;
        starts[k] = ops.start[i];
        ends[k] = ops.end[i];
        k++;
      }
    }
    const busy = unionIntervals(starts, ends);
    const m = busy.starts.length;
    out.push({
      deviceId: d,
      busy,
      spanStartNs: m ? busy.starts[0] : 0,
      spanEndNs: m ? busy.ends[m - 1] : 0,
      busyNs: coveredLength(busy),
      pids: [...pids.get(d)!].sort((a, b) => a - b),
      opCount: counts.get(d)!,
    });
  }
  return out;
}

/** Number of gaps of a timeline (between consecutive busy intervals). */
export function gapCount(t: DeviceTimeline): number {
  return Math.max(0, t.busy.starts.length - 1);
}

/** Gap `i` of a timeline: from the end of busy interval i to the start of busy interval i+1. */
export function gapAt(t: DeviceTimeline, i: number): [number, number] {
  return [t.busy.ends[i], t.busy.starts[i + 1]];
}

/**
 * For each requested gap boundary on one device: an op that ends exactly at the gap's start (the
 * op before) and an op that starts exactly at its end (the op after). Among several candidates the
 * first in scan order wins. Returns op indices (-1 when none, which cannot happen for a real gap).
 */
export function resolveBoundaryOps(ops: GpuOpColumns, deviceId: number, gapStarts: ArrayLike<number>, gapEnds: ArrayLike<number>): { before: Int32Array; after: Int32Array } {
  const wantEnd = new Map<number, number>();
  const wantStart = new Map<number, number>();
  for (let i = 0; i < gapStarts.length; i++) wantEnd.set(gapStarts[i], -1);
  for (let i = 0; i < gapEnds.length; i++) wantStart.set(gapEnds[i], -1);
  for (let i = 0; i < ops.count; i++) {
    if (ops.deviceId[i] !== deviceId || !(ops.end[i] > ops.start[i])) continue;
    if (wantEnd.get(ops.end[i]) === -1) wantEnd.set(ops.end[i], i);
    if (wantStart.get(ops.start[i]) === -1) wantStart.set(ops.start[i], i);
  }
  return {
    before: Int32Array.from({ length: gapStarts.length }, (_, i) => wantEnd.get(gapStarts[i]) ?? -1),
    after: Int32Array.from({ length: gapEnds.length }, (_, i) => wantStart.get(gapEnds[i]) ?? -1),
  };
}

/** What an op is, for people: its kind and (kernels) its demangled name. */
export interface GapOp {
  kind: (typeof GPU_OP_KIND_NAMES)[number];
  name: string;
  startNs: number;
  endNs: number;
  streamId: number | null;
  correlationId: number | null;
  pid: number;
}

export function describeOp(ops: GpuOpColumns, i: number, names: Map<number, string>): GapOp | null {
  if (i < 0) return null;
  const kind = GPU_OP_KIND_NAMES[ops.kind[i]] ?? 'kernel';
  const nameId = ops.nameId[i];
  let name: string;
  if (kind === 'kernel') name = Number.isNaN(nameId) ? '[kernel]' : (names.get(nameId) ?? `[kernel ${nameId}]`);
  else name = `[CUDA ${kind}]`;
  return {
    kind,
    name,
    startNs: ops.start[i],
    endNs: ops.end[i],
    streamId: ops.streamId[i] < 0 ? null : ops.streamId[i],
    correlationId: Number.isNaN(ops.correlationId[i]) ? null : ops.correlationId[i],
    pid: ops.pid[i],
  };
}
