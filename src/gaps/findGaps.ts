import { GPU_OP_KIND_NAMES, filterDevice, type GpuOpColumns } from '../load/gpuOpColumns.js';
import { computeDeviceTimelines, type DeviceTimeline } from '../load/deviceTimelines.js';
import type { LoadedExport } from '../load/loadedExport.js';
import { NO_STRING_ID } from '../columns/typedColumn.js';
import { ascendingRunBounds } from '../math/intervals.js';

export type { DeviceTimeline, GpuOpColumns };

/**
 * The GPU ops and the busy union of each device: every device's from the loaded export (built
 * once, shared with the iteration attribution), or, for one device (`deviceId`), its ops' own.
 */
export function gpuTimelines(loaded: LoadedExport, deviceId?: number): { ops: GpuOpColumns; devices: DeviceTimeline[] } {
  if (deviceId === undefined) return { ops: loaded.gpuOps(), devices: loaded.deviceTimelines() };
  const ops = filterDevice(loaded.gpuOps(), deviceId);
  return { ops, devices: computeDeviceTimelines(ops) };
}

/**
 * For each requested gap boundary on one device: an op that ends exactly at the gap's start (the
 * op before) and an op that starts exactly at its end (the op after). Among several candidates the
 * first in scan order wins. Returns op indices (-1 when none, which cannot happen for a real gap).
 */
export function resolveBoundaryOps(ops: GpuOpColumns, deviceId: number, gapStarts: ArrayLike<number>, gapEnds: ArrayLike<number>): { before: Int32Array; after: Int32Array } {
  const searched = boundaryOpsBySearch(ops, deviceId, gapStarts, gapEnds);
  if (searched) return searched;
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

/** Above this many ascending runs of the ops' starts or ends, the boundaries are not searched run by run. */
const MAX_SEARCHED_RUNS = 8;

/**
 * `resolveBoundaryOps` by binary search, for a few gaps (the long ones) over ops whose starts and
 * ends each come in a few ascending runs (table by table, each in time order): in each run, the
 * first op at the time, skipping those of other devices and empty ones; the first run with one
 * holds the lowest index, as the scan's first claim. Null (scan instead) for many gaps, where a
 * search each costs more than one pass over the ops, or for ops in no such order.
 */
function boundaryOpsBySearch(ops: GpuOpColumns, deviceId: number, gapStarts: ArrayLike<number>, gapEnds: ArrayLike<number>): { before: Int32Array; after: Int32Array } | null {
  // A search (a few runs, ~20 steps each) costs about what the scan spends on 4-5 ops.
  if ((gapStarts.length + gapEnds.length) * 4 > ops.count) return null;
  const endRuns = ascendingRunBounds(ops.end, ops.count, MAX_SEARCHED_RUNS);
  const startRuns = endRuns && ascendingRunBounds(ops.start, ops.count, MAX_SEARCHED_RUNS);
  if (!endRuns || !startRuns) return null;
  return {
    before: Int32Array.from({ length: gapStarts.length }, (_, i) => firstOpAt(ops, deviceId, ops.end, endRuns, gapStarts[i])),
    after: Int32Array.from({ length: gapEnds.length }, (_, i) => firstOpAt(ops, deviceId, ops.start, startRuns, gapEnds[i])),
  };
}

/** The lowest op index with `times[i] === t` on `deviceId` with a length (`runs`: ascending runs of `times`), or -1. */
function firstOpAt(ops: GpuOpColumns, deviceId: number, times: Float64Array, runs: readonly number[], t: number): number {
  for (let r = 0; r + 1 < runs.length; r++) {
    const end = runs[r + 1];
    let lo = runs[r];
    let hi = end;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (times[mid] < t) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < end && times[i] === t; i++) if (ops.deviceId[i] === deviceId && ops.end[i] > ops.start[i]) return i;
  }
  return -1;
}

/**
 * A set of timestamps, each holding one op index (-1 until claimed): open addressing over typed
 * arrays, so testing millions of op times costs one multiply and a probe or two each, with no
 * hashing of float keys in a Map (which grew 28x on 10x the ops). A bitmap of the keys' home slots
 * (one bit a slot: it stays in cache when the table does not) answers most misses, which are
 * nearly every op tested, without touching the table (its random reads were most of the time on
 * the 10x bench export).
 */
class TimeTable {
  private readonly keys: Float64Array;
  private readonly values: Int32Array;
  private readonly homes: Uint32Array;
  private readonly shift: number;
  private readonly mask: number;
  constructor(times: ArrayLike<number>) {
    let bits = 5;
    while (1 << bits < 2 * times.length) bits++;
    this.keys = new Float64Array(1 << bits).fill(NaN);
    this.values = new Int32Array(1 << bits).fill(-1);
    this.homes = new Uint32Array(1 << (bits - 5));
    this.shift = 32 - bits;
    this.mask = (1 << bits) - 1;
    for (let i = 0; i < times.length; i++) {
      const t = times[i];
      let h = this.hash(t);
      this.homes[h >>> 5] |= 1 << (h & 31);
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
    // No key starts its probe here: t is not one.
    if ((this.homes[h >>> 5] & (1 << (h & 31))) === 0) return -1;
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
