import { meanSmActiveInGaps } from './smActive.js';
import { GpuOpKind } from '../load/gpuOpColumns.js';
import { threadKey, type HostCauseRows } from '../load/hostRangeReads.js';
import type { LoadedExport } from '../load/loadedExport.js';
import { PHASES, type Phase } from '../iterations/phase.js';
import type { IterationRow } from '../iterations/types.js';
import { formatNs } from '../formatNs.js';
import { WindowIndex } from '../iterations/windowIndex.js';
import { causeRank, innermostSegmentsOf, layeredSegments, splitGapCauses, type NamedSegments } from './attributeCauses.js';
import { gapCount } from '../load/deviceTimelines.js';
import { busyEndAt, busyStartAt } from '../math/busyIntervals.js';
import { describeOp, gpuTimelines, resolveBoundaryOps, type DeviceTimeline, type GapOp, type GpuOpColumns } from './findGaps.js';
import { GC_RANGE, GIL_DOMAIN, launchCallLookup, loadHostContext, loadLaunchSide, type ApiCallInfo, type HostContext, type LaunchSide } from './hostCauses.js';
import { NO_STRING_ID } from '../columns/typedColumn.js';
import { InternedStrings } from '../columns/internedStrings.js';

/** Default `--min-gap`: 100 us. */
export const DEFAULT_MIN_GAP_NS = 100_000;

/** What the gap analysis needs of an iteration (an `IterationRow` has it). */
export type IterationRef = Pick<IterationRow, 'iter' | 'pid' | 'startNs' | 'endNs' | 'phase'>;

export interface GapAnalysisOptions {
  /** Gaps of at least this many ns are reported one by one; shorter ones are fragmented idle. */
  minGapNs?: number;
  /** Only this CUDA device. */
  deviceId?: number;
  /** Iteration windows to place gaps in (found by the pipeline); omitted or null: none. */
  iterations?: readonly IterationRef[] | null;
  /** Why there are no iterations (the pipeline's IterationError), for the notes. */
  iterationsUnavailable?: string;
  /**
   * The NVTX rows the host causes read (`hostCauseRows`), taken before a large export let its NVTX
   * columns go, or by the NVTX worker; omitted: the NVTX columns when loaded, else a query.
   */
  causeRows?: HostCauseRows;
}

/** The CUDA API call that launched the op after a gap (what the gap scan's lookup gives). */
export type GapLaunchCall = ApiCallInfo;

/** One reported gap (duration >= minGapNs). */
export interface GapRow {
  deviceId: number;
  /** The process whose op ended the gap; its threads explain the gap. */
  pid: number;
  startNs: number;
  endNs: number;
  durationNs: number;
  /** Iteration whose window holds the gap's start (same process), null when none. */
  iter: number | null;
  phase: Phase | null;
  /** Primary cause: the largest part of `causes`. */
  cause: string;
  /** Cause -> ns; the values add up to durationNs. */
  causes: Record<string, number>;
  before: GapOp | null;
  after: GapOp | null;
  /** The API call behind `after` (null when the export has no matching CUDA API row). */
  launchCall: GapLaunchCall | null;
  /** Mean SMs Active (%) inside the gap when GPU metrics were sampled (near 0 if truly idle). */
  smActivePct?: number | null;
}

export interface DeviceGapSummary {
  deviceId: number;
  pids: number[];
  opCount: number;
  /** First op start .. last op end on the device. */
  spanStartNs: number;
  spanEndNs: number;
  spanNs: number;
  /** Union of all GPU work; busyNs + idleNs = spanNs. */
  busyNs: number;
  idleNs: number;
  /** All gaps, any size. */
  gapCount: number;
  /** Gaps >= minGapNs and their time; idleNs = gapIdleNs + fragmentedIdleNs. */
  gaps: number;
  gapIdleNs: number;
  fragmentedGaps: number;
  fragmentedIdleNs: number;
  /** The reported gaps' time by cause (sums to gapIdleNs). */
  idleByCauseNs: Record<string, number>;
}

export interface IterationGapSummary {
  iter: number;
  pid: number;
  phase: Phase;
  startNs: number;
  endNs: number;
  gaps: number;
  gapIdleNs: number;
  fragmentedGaps: number;
  fragmentedIdleNs: number;
  idleByCauseNs: Record<string, number>;
}

/** `none`: gaps outside every iteration window (or no iterations found). */
export type GapPhase = Phase | 'none';

export interface PhaseGapSummary {
  phase: GapPhase;
  iterations: number;
  gaps: number;
  gapIdleNs: number;
  fragmentedGaps: number;
  fragmentedIdleNs: number;
  idleByCauseNs: Record<string, number>;
}

export interface GapThreads {
  pid: number;
  /** The thread that launched the most GPU work. */
  executorTid: number;
  /** Every launching thread, busiest first, with its number of launch calls (API calls that started GPU work). */
  tids: number[];
  launches: number[];
}

export interface GapAnalysis {
  file: string;
  minGapNs: number;
  /** Gaps are attributed to `gc` only when the export has `Python GC` ranges. */
  gcTraced: boolean;
  /** Gaps are attributed to `gil_wait` only in processes with a `GIL Trace` domain. */
  gilTraced: boolean;
  iterationsFound: boolean;
  devices: DeviceGapSummary[];
  /** Reported gaps in time order (device, start). */
  gaps: GapRow[];
  /** Reported gaps' time by cause over all devices. */
  idleByCauseNs: Record<string, number>;
  iterations: IterationGapSummary[];
  phases: PhaseGapSummary[];
  threads: GapThreads[];
  /** Blocking CUDA API names seen on launching threads (the `sync` cause). */
  syncApis: string[];
  notes: string[];
}

function addTo(into: Record<string, number>, from: Record<string, number>): void {
  // for...in, not Object.entries: no pair arrays for each of tens of thousands of gaps.
  for (const k in from) into[k] = (into[k] ?? 0) + from[k];
}

/** Causes sorted for output: priority order, then larger first. */
export function sortCauses(rec: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of Object.keys(rec).sort((a, b) => causeRank(a) - causeRank(b) || rec[b] - rec[a] || (a < b ? -1 : a > b ? 1 : 0))) out[k] = rec[k];
  return out;
}


/**
 * The long gaps of a scan, in device order, as columns (gap g at index g): held from the scan to
 * their explanation, through the iteration attribution's peak, where 280,000 gap objects were ~50
 * MB of the heap on the 30x bench copy (48 bytes a gap here).
 */
interface PendingGaps {
  count: number;
  deviceId: Int32Array;
  pid: Int32Array;
  startNs: Float64Array;
  endNs: Float64Array;
  /** The ops on either side (-1: none). */
  before: Int32Array;
  after: Int32Array;
  /**
   * The API call behind `after`, found in the scan: its name's index in `callNames` (-1: no call,
   * or no op after), its start and its thread.
   */
  callName: Int32Array;
  callStartNs: Float64Array;
  callTid: Int32Array;
  callNames: string[];
}

/** One device's long gaps, as `scanGaps` finds them. */
interface DeviceLongGaps {
  deviceId: number;
  starts: readonly number[];
  ends: readonly number[];
  before: Int32Array;
  after: Int32Array;
  pid: Int32Array;
  calls: (GapLaunchCall | null)[];
}

/** The devices' long gaps in one set of columns, each call's name held once. */
function pendingGapsOf(parts: readonly DeviceLongGaps[]): PendingGaps {
  const n = parts.reduce((t, p) => t + p.starts.length, 0);
  const names = new InternedStrings();
  const out: PendingGaps = {
    count: n,
    deviceId: new Int32Array(n),
    pid: new Int32Array(n),
    startNs: new Float64Array(n),
    endNs: new Float64Array(n),
    before: new Int32Array(n),
    after: new Int32Array(n),
    callName: new Int32Array(n),
    callStartNs: new Float64Array(n),
    callTid: new Int32Array(n),
    callNames: names.list,
  };
  let g = 0;
  for (const p of parts) {
    out.before.set(p.before, g);
    out.after.set(p.after, g);
    out.pid.set(p.pid, g);
    for (let i = 0; i < p.starts.length; i++, g++) {
      out.deviceId[g] = p.deviceId;
      out.startNs[g] = p.starts[i];
      out.endNs[g] = p.ends[i];
      const call = p.calls[i];
      if (call === null) {
        out.callName[g] = -1;
        continue;
      }
      out.callName[g] = names.intern(call.name);
      out.callStartNs[g] = call.startNs;
      out.callTid[g] = call.tid;
    }
  }
  return out;
}

/** Gap g's launch call as the scan found it (a new object, as the lookup gave it), or null. */
function launchCallOf(p: PendingGaps, g: number): GapLaunchCall | null {
  const k = p.callName[g];
  return k < 0 ? null : { name: p.callNames[k], startNs: p.callStartNs[g], tid: p.callTid[g] };
}

/** Where the gaps' time goes per iteration (the last slot: outside every window). */
interface IterationSlots {
  refs: readonly IterationRef[];
  index: WindowIndex;
  summaries: IterationGapSummary[];
  outside: Omit<IterationGapSummary, 'iter' | 'pid' | 'phase' | 'startNs' | 'endNs'>;
  /**
   * Per slot (the iterations', then the outside's): its iteration and phase (null outside), and
   * the summary its gaps add to. A gap's slot is looked up, never branched on: a long capture's
   * first thousands of gaps come before the first iteration, and code run only for gaps inside
   * one would be optimized without having run (and deoptimized at the first such gap).
   */
  slotIter: readonly (number | null)[];
  slotPhase: readonly (Phase | null)[];
  slotTarget: readonly IterationSlots['outside'][];
}

function iterationSlots(refs: readonly IterationRef[]): IterationSlots {
  const summaries: IterationGapSummary[] = refs.map((r) => ({
    iter: r.iter,
    pid: r.pid,
    phase: r.phase,
    startNs: r.startNs,
    endNs: r.endNs,
    gaps: 0,
    gapIdleNs: 0,
    fragmentedGaps: 0,
    fragmentedIdleNs: 0,
    idleByCauseNs: {},
  }));
  // Shaped as the iterations' summaries, so the sums see one kind of object (its fields before
  // `gaps` are never read).
  const shaped = { iter: -1, pid: -1, phase: 'none', startNs: 0, endNs: 0, gaps: 0, gapIdleNs: 0, fragmentedGaps: 0, fragmentedIdleNs: 0, idleByCauseNs: {} };
  const outside: IterationSlots['outside'] = shaped;
  return {
    refs,
    index: new WindowIndex(refs),
    summaries,
    outside,
    slotIter: [...refs.map((r) => r.iter), null],
    slotPhase: [...refs.map((r) => r.phase), null],
    slotTarget: [...summaries, outside],
  };
}

/**
 * Finds every GPU idle gap per device and explains the long ones from the host side.
 *
 * - Busy time of a device = union of all its GPU ops (kernels, memcpy, memset, whole-graph
 *   launches) on all streams and processes; its span runs from the first op start to the last op
 *   end; gaps are the holes between consecutive busy intervals, so busy + gaps = span exactly.
 * - A gap with duration >= minGapNs is reported with its causes; shorter gaps are summed as
 *   fragmented idle per device, iteration and phase.
 * - Causes come from the process whose op ended the gap: see `splitGapCauses` for the priority
 *   split and `loadHostContext` for which threads and ranges count.
 */
export function analyzeGaps(loaded: LoadedExport, opts: GapAnalysisOptions = {}): GapAnalysis {
  return explainScannedGaps(loaded, scanGaps(loaded, opts), opts);
}

/**
 * What the gap analysis finds before the iterations and the host's NVTX ranges are known
 * (`scanGaps`): each device's gaps, the long ones with the ops on either side, and the host side
 * the CUDA API calls give. The pipeline scans while the NVTX worker still reads; `explainScannedGaps`
 * then places the gaps in the iterations and explains the long ones.
 */
export interface GapScan {
  minGapNs: number;
  deviceId: number | undefined;
  /** Per device: its totals (no gap reported yet) and which process ended each gap. */
  devices: readonly DeviceGapScan[];
  /** The long gaps, in device order. */
  pending: PendingGaps;
  launch: LaunchSide;
  /** With `deviceId`: that device's ops and timeline (`pending` indexes these ops). */
  filtered?: { ops: GpuOpColumns; devices: DeviceTimeline[] };
}

interface DeviceGapScan {
  /** Without the reported gaps: `gaps`, `gapIdleNs` 0 and `idleByCauseNs` empty. */
  summary: Readonly<DeviceGapSummary>;
  /** The process that ended each gap on a device that ran several (else null: its only one). */
  afterPid: Int32Array | null;
}

/** Every gap per device: totals and the long gaps' bounds and ops; the launch side of the host. */
export function scanGaps(loaded: LoadedExport, opts: Pick<GapAnalysisOptions, 'minGapNs' | 'deviceId'> = {}): GapScan {
  const minGapNs = opts.minGapNs ?? DEFAULT_MIN_GAP_NS;
  const timelines = gpuTimelines(loaded, opts.deviceId);
  const { ops } = timelines;
  const devices: DeviceGapScan[] = [];
  const long: DeviceLongGaps[] = [];
  const launch = loadLaunchSide(loaded, ops);
  // Each long gap's launch call is found here, where the API calls are read: the explanation after
  // the iterations then reads none (the columns can go before it; 90 MB on the 10x bench export).
  const callOf = launchCallLookup(loaded, launch);
  for (const t of timelines.devices) {
    const { summary, afterPid, longStarts, longEnds } = splitDeviceGaps(ops, t, minGapNs);
    devices.push({ summary, afterPid });
    if (!longStarts.length) continue;
    const { before, after } = resolveBoundaryOps(ops, t.deviceId, longStarts, longEnds);
    const pid = new Int32Array(longStarts.length);
    const calls: (GapLaunchCall | null)[] = [];
    for (let i = 0; i < longStarts.length; i++) {
      pid[i] = after[i] >= 0 ? ops.pid[after[i]] : before[i] >= 0 ? ops.pid[before[i]] : t.pids[0];
      const corr = after[i] >= 0 ? ops.correlationId[after[i]] : NaN;
      calls.push((Number.isNaN(corr) ? undefined : callOf(pid[i], corr)) ?? null);
    }
    long.push({ deviceId: t.deviceId, starts: longStarts, ends: longEnds, before, after, pid, calls });
  }
  const pending = pendingGapsOf(long);
  return { minGapNs, deviceId: opts.deviceId, devices, pending, launch, ...(opts.deviceId !== undefined ? { filtered: timelines } : {}) };
}

/**
 * The gap analysis from `scan` (`scanGaps` of the same export): the short gaps summed per
 * iteration, the long ones explained from the host side and placed in their iterations.
 */
export function explainScannedGaps(
  loaded: LoadedExport,
  scan: GapScan,
  opts: Pick<GapAnalysisOptions, 'iterations' | 'iterationsUnavailable' | 'causeRows'> & { shortGaps?: ShortGapPlacement } = {},
): GapAnalysis {
  const { minGapNs, deviceId } = scan;
  // The ops only: the busy union was needed for the short gaps alone (`shortGaps`, placed before).
  const ops = scan.filtered?.ops ?? loaded.gpuOps();
  const slots = iterationSlots(opts.iterations ?? []);
  addShortGaps(slots, opts.shortGaps ?? placeShortGaps(loaded, scan, opts.iterations));
  const summaries = scan.devices.map((d) => ({ ...d.summary, idleByCauseNs: {} }));
  const host = loadHostContext(loaded, scan.launch, opts.causeRows);
  const rows = explainGaps(loaded, ops, scan.pending, host, slots);
  // (Here, not at the end of explainGaps: code after a long loop that has never run costs a deopt.)
  for (const it of slots.summaries) it.idleByCauseNs = sortCauses(it.idleByCauseNs);
  addByDevice(summaries, rows);
  const threads: GapThreads[] = [...host.threads.values()]
    .sort((a, b) => a.pid - b.pid)
    .map((t) => ({ pid: t.pid, executorTid: t.tids[0], tids: t.tids, launches: t.launches }));
  const notes = opts.iterationsUnavailable ? [`no iterations: ${opts.iterationsUnavailable}; gaps are not placed in iterations`] : [];
  notes.push(...gapNotes(ops, summaries, rows, threads, host, { minGapNs, deviceId }));
  const sm = meanSmActiveInGaps(loaded, rows);
  if (sm.values) rows.forEach((r, i) => (r.smActivePct = sm.values![i]));
  if (sm.note) notes.push(sm.note);
  const missingCall = rows.filter((r) => r.after && !r.launchCall).length;
  if (missingCall) notes.push(`${missingCall} gaps end with an op whose CUDA API call is not in the export: launch_late cannot be checked for them`);
  const total = totalByCause(rows);
  return {
    file: loaded.path,
    minGapNs,
    gcTraced: host.gcTraced,
    gilTraced: host.gilTracedPids.size > 0,
    iterationsFound: slots.refs.length > 0,
    devices: summaries,
    gaps: rows.sort((a, b) => a.deviceId - b.deviceId || a.startNs - b.startNs),
    idleByCauseNs: sortCauses(total),
    iterations: slots.summaries,
    phases: phaseSummaries(slots),
    threads,
    syncApis: [...host.syncApiNames],
    notes,
  };
}

/**
 * The short gaps (below `GapScan.minGapNs`), counted and summed per iteration: slot k is
 * `iterations[k]`'s, the last slot is outside every window.
 */
export interface ShortGapPlacement {
  count: Float64Array;
  ns: Float64Array;
}

/**
 * Places every short gap of `scan` in `iterations` (the rows `explainScannedGaps` is given). The
 * only reader of the busy union after the scan: the pipeline runs it as a part of its own, so the
 * union (111 MB on the 10x bench export) is let go before the long gaps are explained.
 */
export function placeShortGaps(loaded: LoadedExport, scan: GapScan, iterations: readonly IterationRef[] | null | undefined): ShortGapPlacement {
  const devices = scan.filtered?.devices ?? gpuTimelines(loaded).devices;
  const refs = iterations ?? [];
  const index = new WindowIndex(refs);
  const n0 = refs.length;
  const count = new Float64Array(n0 + 1);
  const ns = new Float64Array(n0 + 1);
  devices.forEach((t, di) => {
    const afterPid = scan.devices[di].afterPid;
    const n = gapCount(t);
    for (let i = 0; i < n; i++) {
      const s = busyEndAt(t.busy, i);
      const d = busyStartAt(t.busy, i + 1) - s;
      if (d >= scan.minGapNs) continue;
      const k = index.at(afterPid ? afterPid[i] : t.pids[0], s);
      const slot = k >= 0 ? k : n0;
      count[slot]++;
      ns[slot] += d;
    }
  });
  return { count, ns };
}

/** Adds the short gaps' counts and time to each iteration slot's summary (the last: outside). */
function addShortGaps(slots: IterationSlots, placed: ShortGapPlacement): void {
  for (let k = 0; k <= slots.refs.length; k++) {
    const target = slots.slotTarget[k];
    target.fragmentedGaps += placed.count[k];
    target.fragmentedIdleNs += placed.ns[k];
  }
}

/** One device's gaps: idle time, the short ones counted, the long ones' bounds. */
function splitDeviceGaps(ops: GpuOpColumns, t: DeviceTimeline, minGapNs: number): { summary: DeviceGapSummary; afterPid: Int32Array | null; longStarts: number[]; longEnds: number[] } {
  const n = gapCount(t);
  // Which process ended each gap: trivial on a device with one process; else the op after it.
  let afterPid: Int32Array | null = null;
  if (t.pids.length > 1) {
    const ends = Float64Array.from({ length: n }, (_, i) => busyStartAt(t.busy, i + 1));
    const { after } = resolveBoundaryOps(ops, t.deviceId, [], ends);
    afterPid = Int32Array.from(after, (i) => (i >= 0 ? ops.pid[i] : t.pids[0]));
  }
  const longStarts: number[] = [];
  const longEnds: number[] = [];
  const busy = t.busy;
  // Millions of gaps on a big export: plain locals in the loop.
  let idleNs = 0;
  let fragGaps = 0;
  let fragNs = 0;
  for (let i = 0; i < n; i++) {
    const s = busyEndAt(busy, i);
    const e = busyStartAt(busy, i + 1);
    const d = e - s;
    idleNs += d;
    if (d >= minGapNs) {
      longStarts.push(s);
      longEnds.push(e);
      continue;
    }
    fragGaps++;
    fragNs += d;
  }
  const summary: DeviceGapSummary = {
    deviceId: t.deviceId,
    pids: t.pids,
    opCount: t.opCount,
    spanStartNs: t.spanStartNs,
    spanEndNs: t.spanEndNs,
    spanNs: t.spanEndNs - t.spanStartNs,
    busyNs: t.busyNs,
    idleNs,
    gapCount: n,
    gaps: 0,
    gapIdleNs: 0,
    fragmentedGaps: fragGaps,
    fragmentedIdleNs: fragNs,
    idleByCauseNs: {},
  };
  return { summary, afterPid, longStarts, longEnds };
}

/** Each long gap with its causes, in time order (the NVTX cursors move forward); added to its iteration's summary. */
function explainGaps(loaded: LoadedExport, ops: GpuOpColumns, pending: PendingGaps, host: HostContext, slots: IterationSlots): GapRow[] {
  const nameIds = new Set<number>();
  for (let g = 0; g < pending.count; g++) {
    for (const i of [pending.before[g], pending.after[g]]) if (i >= 0 && ops.kind[i] === GpuOpKind.Kernel && ops.nameId[i] !== NO_STRING_ID) nameIds.add(ops.nameId[i]);
  }
  const kernelNames = loaded.strings(nameIds);
  const order = timeOrder(pending);
  const rows: GapRow[] = new Array(pending.count);
  for (const gi of order) {
    const pid = pending.pid[gi];
    const startNs = pending.startNs[gi];
    const endNs = pending.endNs[gi];
    const launchCall = launchCallOf(pending, gi);
    const split = splitGapCauses({
      startNs,
      endNs,
      gc: host.gcByPid.get(pid),
      gilWait: host.gilWaitByPid.get(pid),
      sync: host.syncByPid.get(pid),
      launchApiStartNs: launchCall?.startNs ?? null,
      nvtx: layeredSegments(threadSegments(host, pid, startNs, endNs)),
    });
    const k = slots.index.at(pid, startNs);
    const slot = k >= 0 ? k : slots.refs.length;
    rows[gi] = {
      deviceId: pending.deviceId[gi],
      pid,
      startNs,
      endNs,
      durationNs: endNs - startNs,
      iter: slots.slotIter[slot],
      phase: slots.slotPhase[slot],
      cause: split.cause,
      causes: split.causes,
      before: describeOp(ops, pending.before[gi], kernelNames),
      after: describeOp(ops, pending.after[gi], kernelNames),
      launchCall,
    };
    const target = slots.slotTarget[slot];
    target.gaps++;
    target.gapIdleNs += rows[gi].durationNs;
    addTo(target.idleByCauseNs, split.causes);
  }
  return rows;
}

/**
 * The gaps' indices by start, then device. The scan lists each device's gaps in time order, so
 * with one device (or devices that do not interleave) they are in order already and no sort runs.
 */
function timeOrder(pending: PendingGaps): number[] {
  const { startNs, deviceId } = pending;
  const before = (a: number, b: number) => startNs[a] - startNs[b] || deviceId[a] - deviceId[b];
  const order = Array.from({ length: pending.count }, (_, i) => i);
  for (let i = 1; i < order.length; i++) if (before(i - 1, i) > 0) return order.sort(before);
  return order;
}

/** The innermost NVTX range segments of each launching thread of the gap's process inside the gap. */
function threadSegments(host: HostContext, pid: number, startNs: number, endNs: number): NamedSegments[] {
  return (host.threads.get(pid)?.tids ?? []).map((tid) => {
    const tr = host.nvtxByThread.get(threadKey(pid, tid));
    if (!tr) return { starts: [], ends: [], names: [] };
    const open = tr.overlapping(startNs, endNs);
    // One pass into plain arrays (every gap of a capture comes here).
    const starts: number[] = [];
    const ends: number[] = [];
    const names: string[] = [];
    for (let k = 0; k < open.length; k++) {
      const i = open[k];
      starts.push(tr.start[i]);
      ends.push(tr.end[i]);
      names.push(host.nvtxNames[tr.name[i]]);
    }
    return innermostSegmentsOf({ starts, ends, names }, startNs, endNs);
  });
}

/** The reported gaps' time per device, by cause. */
function addByDevice(summaries: DeviceGapSummary[], rows: readonly GapRow[]): void {
  const byDevice = new Map(summaries.map((s) => [s.deviceId, s]));
  for (const r of rows) {
    const s = byDevice.get(r.deviceId)!;
    s.gaps++;
    s.gapIdleNs += r.durationNs;
    addTo(s.idleByCauseNs, r.causes);
  }
  for (const s of summaries) s.idleByCauseNs = sortCauses(s.idleByCauseNs);
}

function totalByCause(rows: readonly GapRow[]): Record<string, number> {
  const total: Record<string, number> = {};
  for (const r of rows) addTo(total, r.causes);
  return total;
}

/** Per phase (in PHASES order, then `none`: outside every iteration, when it has gaps). */
function phaseSummaries(slots: IterationSlots): PhaseGapSummary[] {
  const phases: PhaseGapSummary[] = [];
  for (const phase of [...PHASES, 'none'] as GapPhase[]) {
    const its = phase === 'none' ? [] : slots.summaries.filter((it) => it.phase === phase);
    const src = phase === 'none' ? [slots.outside] : its;
    if (phase !== 'none' && its.length === 0) continue;
    const p: PhaseGapSummary = { phase, iterations: its.length, gaps: 0, gapIdleNs: 0, fragmentedGaps: 0, fragmentedIdleNs: 0, idleByCauseNs: {} };
    for (const x of src) {
      p.gaps += x.gaps;
      p.gapIdleNs += x.gapIdleNs;
      p.fragmentedGaps += x.fragmentedGaps;
      p.fragmentedIdleNs += x.fragmentedIdleNs;
      addTo(p.idleByCauseNs, x.idleByCauseNs);
    }
    p.idleByCauseNs = sortCauses(p.idleByCauseNs);
    if (phase === 'none' && p.gaps === 0 && p.fragmentedGaps === 0) continue;
    phases.push(p);
  }
  return phases;
}

/** What the numbers rest on and what could not be attributed, as one-line notes. */
function gapNotes(ops: GpuOpColumns, summaries: readonly DeviceGapSummary[], rows: readonly GapRow[], threads: readonly GapThreads[], host: HostContext, opts: { minGapNs: number; deviceId?: number }): string[] {
  const notes: string[] = [];
  const fragmented = summaries.reduce((a, s) => a + s.fragmentedGaps, 0);
  if (ops.count === 0) notes.push(opts.deviceId !== undefined ? `no GPU work on device ${opts.deviceId}` : 'the export has no GPU work (no kernel, memcpy, memset or graph rows)');
  else {
    notes.push(
      `${rows.length} gaps >= ${formatNs(opts.minGapNs)} (${formatNs(rows.reduce((a, r) => a + r.durationNs, 0))}); ${fragmented} shorter gaps (${formatNs(summaries.reduce((a, s) => a + s.fragmentedIdleNs, 0))}) counted as fragmented idle`,
    );
  }
  let graphOps = 0;
  for (let i = 0; i < ops.count; i++) if (ops.kind[i] === GpuOpKind.Graph) graphOps++;
  if (graphOps) notes.push(`${graphOps} whole-graph launches (graph-level CUDA-graph trace) count as busy time`);
  for (const s of summaries) if (s.pids.length > 1) notes.push(`device ${s.deviceId} runs work of ${s.pids.length} processes (${s.pids.join(', ')}); each gap is explained by the process whose op ended it`);
  for (const t of threads) {
    notes.push(`pid ${t.pid}: ${t.tids.length} thread(s) launch GPU work; executor thread ${t.executorTid} (${t.launches[0]} launch calls)${t.tids.length > 1 ? `, then ${t.tids.slice(1).join(', ')}` : ''}`);
  }
  if (ops.count > 0 && !host.runtimePresent) notes.push('the export has no CUDA API table: launching threads, sync and launch_late cannot be found');
  if (ops.count > 0 && host.runtimePresent && host.threads.size === 0) notes.push('no CUDA API call matches a GPU op (time-trimmed export?): launching threads unknown, only gc can be attributed');
  if (!host.nvtxPresent) notes.push('the export has no NVTX events: gc, gil_wait and nvtx causes are unavailable');
  if (!host.gcTraced) notes.push(`GC not traced: no '${GC_RANGE}' NVTX ranges (TLLM_PROFILE_RECORD_GC=1 records them), so no gap is attributed to gc`);
  if (host.gilTracedPids.size === 0) notes.push(`GIL not traced: no '${GIL_DOMAIN}' NVTX domain (nsys -t python-gil records it), so no gap is attributed to gil_wait`);
  else {
    const missing = [...new Set(rows.map((r) => r.pid))].filter((p) => !host.gilTracedPids.has(p));
    if (missing.length) notes.push(`GIL not traced in process(es) ${missing.join(', ')}: their gaps have no gil_wait part`);
  }
  return notes;
}

/**
 * Idle time by cause of the reported gaps, per iteration number (the gaps whose start lies in the
 * iteration's window). With `iterations`, every iteration gets an entry (empty when it has no
 * gap). If several processes use the same iteration number, their gaps are added together.
 * `includeFragmented` adds a `fragmented` key with the iteration's short-gap idle time.
 */
export function idleByCausePerIteration(
  analysis: GapAnalysis,
  iterations?: readonly { iter: number }[],
  opts: { includeFragmented?: boolean } = {},
): Map<number, Record<string, number>> {
  const out = new Map<number, Record<string, number>>();
  for (const it of iterations ?? []) if (!out.has(it.iter)) out.set(it.iter, {});
  // Summed per iteration number and cause, in summary order (a loop: ~1.5k summaries with ~10
  // causes each took an arquero groupby/rollup 60-150 ms on pytorch-dense-long).
  for (const s of analysis.iterations) {
    let into = out.get(s.iter);
    if (!into) out.set(s.iter, (into = {}));
    addTo(into, s.idleByCauseNs);
    if (opts.includeFragmented && s.fragmentedIdleNs > 0) into.fragmented = (into.fragmented ?? 0) + s.fragmentedIdleNs;
  }
  for (const [k, v] of out) out.set(k, sortCauses(v));
  return out;
}
