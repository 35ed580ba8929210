import type { ExportHandle } from '../../queries/handle.js';
import { GPU_OP_KIND_NAMES } from '../../queries/gpuOps.js';
import { filterDevice, loadGpuOpColumns, unionOfAllOps, type GpuOpColumns } from '../analysis/gpuOpColumns.js';

export type { GpuOpColumns };
import { coveredLength, unionIntervals, type IntervalSet } from '../analysis/intervals.js';
import { NO_STRING_ID } from '../analysis/typedColumn.js';

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

const timelineCache = new WeakMap<GpuOpColumns, DeviceTimeline[]>();

/**
 * Busy union per device from op columns, computed once per columns object (the pipeline computes
 * it while the NVTX worker finishes, before the gaps ask for it). Read-only for callers.
 */
export function deviceTimelines(ops: GpuOpColumns): DeviceTimeline[] {
  let t = timelineCache.get(ops);
  if (!t) timelineCache.set(ops, (t = computeDeviceTimelines(ops)));
  return t;
}

function computeDeviceTimelines(ops: GpuOpColumns): DeviceTimeline[] {
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
    let busy: IntervalSet;
    if (counts.size === 1) busy = unionOfAllOps(ops);
    else {
      const starts = new Float64Array(counts.get(d)!);
      const ends = new Float64Array(counts.get(d)!);
      let k = 0;
      for (let i = 0; i < ops.count; i++) {
        if (ops.deviceId[i] !== d) continue;
        starts[k] = ops.start[i];
        ends[k] = ops.end[i];
        k++;
      }
      busy = unionIntervals(starts, ends);
    }
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
  const ends = new TimeTable(gapStarts);
  const starts = new TimeTable(gapEnds);
  for (let i = 0; i < ops.count; i++) {
    if (ops.deviceId[i] !== deviceId || !(ops.end[i] > ops.start[i])) continue;
    ends.claim(ops.end[i], i);
    starts.claim(ops.start[i], i);
  }
  return {
    before: Int32Array.from({ length: gapStarts.length }, (_, i) => ends.opAt(gapStarts[i])),
    after: Int32Array.from({ length: gapEnds.length }, (_, i) => starts.opAt(gapEnds[i])),
  };
}

/**
 * A set of timestamps, each holding one op index (-1 until claimed): open addressing over typed
 * arrays, so testing millions of op times costs one multiply and a probe or two each, with no
 * hashing of float keys in a Map (which grew 28x on 10x the ops).
 */
class TimeTable {
  private readonly keys: Float64Array;
  private readonly values: Int32Array;
  private readonly shift: number;
  private readonly mask: number;
  constructor(times: ArrayLike<number>) {
    let bits = 4;
    while (1 << bits < 2 * times.length) bits++;
    this.keys = new Float64Array(1 << bits).fill(NaN);
    this.values = new Int32Array(1 << bits).fill(-1);
    this.shift = 32 - bits;
    this.mask = (1 << bits) - 1;
    for (let i = 0; i < times.length; i++) {
      const t = times[i];
      let h = this.hash(t);
      while (!Number.isNaN(this.keys[h]) && this.keys[h] !== t) h = (h + 1) & this.mask;
      this.keys[h] = t;
    }
  }
  private hash(t: number): number {
    // Low and high 32 bits of the (integer) ns timestamp, mixed (Fibonacci hashing).
    return Math.imul((t | 0) ^ ((t / 4294967296) | 0), 0x9e3779b1) >>> this.shift;
  }
  private slot(t: number): number {
    let h = this.hash(t);
    for (;;) {
      const k = this.keys[h];
      if (k === t) return h;
      if (Number.isNaN(k)) return -1;
      h = (h + 1) & this.mask;
    }
  }
  /** Records `op` for time `t` if `t` is in the set and not claimed yet (the first op wins). */
  claim(t: number, op: number): void {
    const h = this.slot(t);
    if (h >= 0 && this.values[h] < 0) this.values[h] = op;
  }
  /** The op claimed for `t`, or -1. */
  opAt(t: number): number {
    const h = this.slot(t);
    return h < 0 ? -1 : this.values[h];
  }
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
  if (kind === 'kernel') name = nameId === NO_STRING_ID ? '[kernel]' : (names.get(nameId) ?? `[kernel ${nameId}]`);
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
