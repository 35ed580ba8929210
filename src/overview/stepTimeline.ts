import type { LoadedExport } from '../load/loadedExport.js';
import { GpuOpKind } from '../load/gpuOpColumns.js';
import type { NvtxColumns } from '../load/nvtxEventColumns.js';
import { callEnd, type ApiCallColumns } from '../load/apiCallColumns.js';
import { InternedStrings } from '../columns/internedStrings.js';
import type { GilRange } from '../load/hostRangeReads.js';
import type { CategoryClassifier } from '../categories/rules.js';
import type { FindingsResult } from '../findings/finding.js';
import type { GapAnalysis } from '../gaps/analyzeGaps.js';
import { GC_RANGE, GIL_WAIT_RANGE, isBlockingSyncApi } from '../gaps/hostCauses.js';
import type { IterationRow } from '../iterations/types.js';
import { numberedSpans, type NumberedSpan } from '../layers/spanPasses.js';
import type { LayerSource, LayersAnalysis, PeriodFit } from '../layers/types.js';

/** At most this many steps get a timeline: the slowest, the median, then those the findings cite. */
export const MAX_TIMELINE_STEPS = 8;
/** GPU ops kept per step (in launch order); the rest are counted in `droppedOps`, so the page stays small. */
export const MAX_STEP_OPS = 5000;
/** Host ranges (NVTX, GC, GIL, sync calls) kept per step. */
export const MAX_STEP_HOST_RANGES = 4000;

/** Why a step has a timeline. */
export type StepReason = 'slowest' | 'median' | `finding:${string}`;

/** One host-side range of a step: an NVTX range, a GC pause, a GIL wait or hold, a blocking CUDA call. */
export interface StepHostRange {
  tid: number;
  kind: 'nvtx' | 'gc' | 'gil_wait' | 'gil_hold' | 'sync';
  /** Index into `StepTimeline.names`. */
  name: number;
  startNs: number;
  endNs: number;
}

/**
 * One iteration at kernel level. The GPU ops are columns (same index = same op), in session ns;
 * `launchStartNs`/`launchTid` are the API call that launched the op (the launch-to-kernel link).
 */
export interface TimelineStep {
  iter: number;
  pid: number;
  reasons: StepReason[];
  label: string;
  /** The iteration window. */
  startNs: number;
  endNs: number;
  /** The window, widened to the end of the last op it launched. */
  viewStartNs: number;
  viewEndNs: number;
  executorTid: number | null;
  ops: { startNs: Float64Array; endNs: Float64Array; deviceId: Int32Array; streamId: Int32Array; category: Int32Array; name: Int32Array; launchStartNs: Float64Array; launchTid: Int32Array };
  /** Ops launched in the window beyond `MAX_STEP_OPS`, and host ranges beyond `MAX_STEP_HOST_RANGES`. */
  droppedOps: number;
  droppedHostRanges: number;
  /** The reported gaps (>= the minimum gap) of the step's process in the view, with their primary cause. */
  gaps: { deviceId: number; startNs: number; endNs: number; cause: string }[];
  host: StepHostRange[];
  /** The step's decoder-layer passes per device (`report --format html --layers`); absent otherwise. */
  layers?: TimelineLayers;
}

/**
 * A drawn step as the `layers` part split it: where its layers came from, how many it has, and its
 * layer spans (`numberedSpans`: one per pass of a layer on a device, and one per run of kernels
 * outside any layer), in session ns like the ops.
 */
export interface TimelineLayers {
  source: LayerSource;
  /** The period fit of an inferred split. */
  fit?: PeriodFit;
  /** Layers the step has (`StepLayers.layers`) and passes of them (spans with a layer). */
  layerCount: number;
  passes: number;
  spans: NumberedSpan[];
}

export interface StepTimeline {
  steps: TimelineStep[];
  /** Category names the ops' `category` indexes (the classifier's, then memcpy and memset unless it has them). */
  categories: string[];
  /** Kernel and range names the steps index. */
  names: string[];
  /** Distinct iterations the findings cite, of which those that fit `MAX_TIMELINE_STEPS` have a timeline. */
  citedIterations: number;
}

/** The rows to draw: the slowest, the median (by wall time), then each cited by a finding, in finding order. */
export function pickTimelineSteps(rows: readonly IterationRow[], findings: FindingsResult | null, max = MAX_TIMELINE_STEPS): { picks: { row: IterationRow; reasons: StepReason[] }[]; cited: number } {
  const picks: { row: IterationRow; reasons: StepReason[] }[] = [];
  const add = (row: IterationRow | undefined, reason: StepReason) => {
    if (!row) return;
    const have = picks.find((p) => p.row === row);
    if (have) {
      if (!have.reasons.includes(reason)) have.reasons.push(reason);
    } else if (picks.length < max) picks.push({ row, reasons: [reason] });
  };
  const byWall = rows.map((r, i) => ({ r, i })).sort((a, b) => b.r.wallNs - a.r.wallNs || a.i - b.i);
  add(byWall[0]?.r, 'slowest');
  add(byWall[Math.floor((byWall.length - 1) / 2)]?.r, 'median');
  const cited = new Set<number>();
  // The first row of each iteration number, as a search from the start finds it: one lookup per
  // evidence row (findings cite many) instead of a scan of every iteration.
  const firstRow = new Map<number, IterationRow>();
  for (const r of rows) if (!firstRow.has(r.iter)) firstRow.set(r.iter, r);
  for (const f of findings?.findings ?? []) {
    for (const e of f.evidence) {
      if (e.iter === undefined) continue;
      cited.add(e.iter);
      add(firstRow.get(e.iter), `finding:${f.id}`);
    }
  }
  return { picks, cited: cited.size };
}

function emptyStep(row: IterationRow, reasons: StepReason[], executorTid: number | null): TimelineStep {
  return {
    iter: row.iter,
    pid: row.pid,
    reasons,
    label: row.label,
    startNs: row.startNs,
    endNs: row.endNs,
    viewStartNs: row.startNs,
    viewEndNs: row.endNs,
    executorTid,
    ops: emptyOps(0),
    droppedOps: 0,
    droppedHostRanges: 0,
    gaps: [],
    host: [],
  };
}

/**
 * Whether the API calls' start column ascends (nsys writes a process's runtime rows in call order:
 * so on a one-process export), and the longest call: then the calls of a span are found by binary
 * search, not by a pass over every call (hundreds of thousands; the steps are a few).
 */
interface CallOrder {
  ascending: boolean;
  maxDurationNs: number;
}

function callOrderOf(calls: ApiCallColumns): CallOrder {
  const start = calls.start;
  let maxDurationNs = 0;
  for (let i = 0; i < calls.count; i++) {
    if (i > 0 && start[i] < start[i - 1]) return { ascending: false, maxDurationNs: Infinity };
    const d = callEnd(calls, i) - start[i];
    if (d > maxDurationNs) maxDurationNs = d;
  }
  return { ascending: true, maxDurationNs };
}

/** First row whose start is >= t (`after`: > t), by binary search over an ascending column. */
function firstStartFrom(start: Float64Array, n: number, t: number, after: boolean): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (start[mid] < t || (after && start[mid] === t)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The call rows that may start in one of `spans` ([from, to], each widened back by `back` ns), as
 * ascending, disjoint [lo, hi) row ranges, flat ([lo0, hi0, lo1, hi1, ...]); every row when the
 * column does not ascend. A loop over them visits the same rows in the same order as a loop over
 * all that passes over the others.
 */
function candidateRows(start: Float64Array, n: number, order: CallOrder, spans: readonly [number, number][], back: number): Float64Array {
  if (!order.ascending) return Float64Array.of(0, n);
  const ranges = spans.map(([from, to]): [number, number] => [firstStartFrom(start, n, from - back, false), firstStartFrom(start, n, to, true)]);
  return mergedIntervals(ranges.filter(([lo, hi]) => hi > lo));
}

/**
 * The API calls made in a step's window, by process and correlation id, with their step: a few
 * thousand, found in one pass over the call columns, so the pass over the (many more) GPU ops is
 * one small-map lookup per op instead of an index lookup and a window search.
 */
function callsInSteps(loaded: LoadedExport, steps: TimelineStep[], order: CallOrder): Map<number, Map<number, { call: number; step: TimelineStep }>> {
  const api = loaded.apiCalls();
  const out = new Map<number, Map<number, { call: number; step: TimelineStep }>>(steps.map((s) => [s.pid, new Map()]));
  // The windows as flat numbers and the columns as locals: this loop runs once per call (hundreds
  // of thousands), almost all outside every window, each passed over with a few compares.
  const starts = Float64Array.from(steps, (s) => s.startNs);
  const ends = Float64Array.from(steps, (s) => s.endNs);
  const pids = Float64Array.from(steps, (s) => s.pid);
  const { start, pid, correlationId } = api;
  const rows = candidateRows(start, api.count, order, steps.map((s) => [s.startNs, s.endNs]), 0);
  for (let r = 0; r < rows.length; r += 2) for (let i = rows[r]; i < rows[r + 1]; i++) callInSteps(i);
  return out;

  function callInSteps(i: number): void {
    const k = windowOf(starts, ends, start[i]);
    if (k < 0) return;
    // Steps of other processes may share the time: the first window of the call's process holds it.
    for (let j = k; j < starts.length; j++) {
      if (start[i] >= starts[j] && start[i] < ends[j] && pid[i] === pids[j]) {
        out.get(pids[j])!.set(correlationId[i], { call: i, step: steps[j] });
        return;
      }
    }
  }
}

/** The first window (of `starts`/`ends`, in step order) holding `t`, or -1. */
function windowOf(starts: Float64Array, ends: Float64Array, t: number): number {
  for (let j = 0; j < starts.length; j++) if (t >= starts[j] && t < ends[j]) return j;
  return -1;
}

/**
 * Intervals as one sorted list of disjoint ones ([lo0, hi0, lo1, hi1, ...]), those that meet or touch
 * merged: the steps' correlation ids and views, tested with one binary search (`inIntervals`) instead
 * of a compare pair each, and the call rows to visit (`candidateRows`).
 */
function mergedIntervals(intervals: readonly (readonly [number, number])[]): Float64Array {
  const sorted = [...intervals].sort((a, b) => a[0] - b[0]);
  const out: number[] = [];
  for (const [lo, hi] of sorted) {
    if (out.length && lo <= out[out.length - 1]) out[out.length - 1] = Math.max(out[out.length - 1], hi);
    else out.push(lo, hi);
  }
  return Float64Array.from(out);
}

/**
 * Whether [start, end] meets one of the disjoint sorted intervals: the last one starting at or
 * before `end` reaches furthest of those that could, so only it is checked. False when either is NaN.
 */
function inIntervals(m: Float64Array, start: number, end: number): boolean {
  let lo = 0;
  let hi = m.length >> 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (m[2 * mid] <= end) lo = mid + 1;
    else hi = mid;
  }
  return lo > 0 && m[2 * lo - 1] >= start;
}

/** An op's category index and name: a kernel's by its name (classified once per name id). */
type OpNamer = (kind: number, nameId: number) => [category: number, name: string];

function opNamer(loaded: LoadedExport, classifier: CategoryClassifier, categories: string[]): OpNamer {
  const byNameId = new Map<number, [number, string]>();
  const graph: [number, string] = [classifier.classify('[CUDA graph]'), '[CUDA graph]'];
  const memcpy: [number, string] = [categories.indexOf('memcpy'), 'memcpy'];
  const memset: [number, string] = [categories.indexOf('memset'), 'memset'];
  return (kind, nameId) => {
    if (kind === GpuOpKind.Graph) return graph;
    if (kind === GpuOpKind.Memcpy) return memcpy;
    if (kind === GpuOpKind.Memset) return memset;
    let v = byNameId.get(nameId);
    if (!v) {
      const name = loaded.stringOf(nameId) ?? 'kernel';
      byNameId.set(nameId, (v = [classifier.classify(name), name]));
    }
    return v;
  };
}

/**
 * The GPU ops launched in each step's window (by the API call that launched them, as the
 * iteration attribution places them): one pass over the op columns picks them (`pickOps`), then
 * their columns are copied (`fillOps`).
 */
function addOps(loaded: LoadedExport, steps: TimelineStep[], classifier: CategoryClassifier, names: InternedStrings, categories: string[], order: CallOrder): void {
  const picked = pickOps(loaded, callsInSteps(loaded, steps, order));
  fillOps(loaded, picked, opNamer(loaded, classifier, categories), names);
}

/**
 * (op, call, step) index triples of the ops launched in the steps' windows. Kept apart from the
 * copying: this loop runs over every op and only collects small integers, so V8 optimizes it once
 * (pushing the doubles of the copies in the same loop deoptimized it again and again, ~0.5 s).
 */
function pickOps(loaded: LoadedExport, calls: Map<number, Map<number, { call: number; step: TimelineStep }>>): { op: number; call: number; step: TimelineStep }[] {
  const ops = loaded.gpuOps();
  const api = loaded.apiCalls();
  // Each step's correlation ids span a range (ids grow with launches): most ops fall outside all
  // of them, tested with a few compares before any map lookup.
  const bounds = new Map<TimelineStep, [number, number]>();
  for (const m of calls.values()) {
    for (const { call, step } of m.values()) {
      const b = bounds.get(step) ?? [Infinity, -Infinity];
      const c = api.correlationId[call];
      bounds.set(step, [Math.min(b[0], c), Math.max(b[1], c)]);
    }
  }
  const ranges = mergedIntervals([...bounds.values()]);
  const corr = ops.correlationId;
  const opPid = ops.pid;
  const out: { op: number; call: number; step: TimelineStep }[] = [];
  for (let i = 0, n = ops.count; i < n; i++) {
    const c = corr[i];
    if (!inIntervals(ranges, c, c)) continue;
    const hit = calls.get(opPid[i])?.get(c);
    if (hit) out.push({ op: i, call: hit.call, step: hit.step });
  }
  return out;
}

/**
 * Copies the picked ops' columns into their steps (at most `MAX_STEP_OPS` each; the rest counted),
 * into typed arrays sized first: pushing doubles into growing arrays deoptimized this loop.
 */
function fillOps(loaded: LoadedExport, picked: readonly { op: number; call: number; step: TimelineStep }[], nameOf: OpNamer, names: InternedStrings): void {
  const ops = loaded.gpuOps();
  const api = loaded.apiCalls();
  const count = new Map<TimelineStep, number>();
  for (const { step } of picked) count.set(step, (count.get(step) ?? 0) + 1);
  const at = new Map<TimelineStep, number>();
  for (const [step, n] of count) {
    const kept = Math.min(n, MAX_STEP_OPS);
    step.droppedOps = n - kept;
    step.ops = emptyOps(kept);
    at.set(step, 0);
  }
  for (const { op: i, call, step } of picked) {
    const j = at.get(step)!;
    if (j >= step.ops.startNs.length) continue;
    at.set(step, j + 1);
    const o = step.ops;
    const [category, name] = nameOf(ops.kind[i], ops.nameId[i]);
    o.startNs[j] = ops.start[i];
    o.endNs[j] = ops.end[i];
    o.deviceId[j] = ops.deviceId[i];
    o.streamId[j] = ops.streamId[i];
    o.category[j] = category;
    o.name[j] = names.intern(name);
    o.launchStartNs[j] = api.start[call];
    o.launchTid[j] = api.tid[call];
    if (ops.end[i] > step.viewEndNs) step.viewEndNs = ops.end[i];
  }
}

/** A step's op columns for `n` ops. */
function emptyOps(n: number): TimelineStep['ops'] {
  return {
    startNs: new Float64Array(n),
    endNs: new Float64Array(n),
    deviceId: new Int32Array(n),
    streamId: new Int32Array(n),
    category: new Int32Array(n),
    name: new Int32Array(n),
    launchStartNs: new Float64Array(n),
    launchTid: new Int32Array(n),
  };
}

/** Overlap of [start, end] with the step's view. */
const inView = (s: TimelineStep, start: number, end: number) => end >= s.viewStartNs && start <= s.viewEndNs;

function pushHost(step: TimelineStep, range: StepHostRange): void {
  if (step.host.length >= MAX_STEP_HOST_RANGES) step.droppedHostRanges++;
  else step.host.push(range);
}

/** NVTX push/pop and start/end range types (marks and domain creations are not drawn). */
const RANGE_TYPES = new Set([59, 60, 70, 71]);

/** The host ranges of the step's process: NVTX (GC and GIL waits among them), the GIL holds, blocking CUDA calls. */
function addHostRanges(loaded: LoadedExport, steps: TimelineStep[], names: InternedStrings, nvtx: NvtxColumns | null, gil: readonly GilRange[], order: CallOrder): void {
  // The views as disjoint intervals: most ranges and calls meet none, told by a binary search over a
  // few; all lie in [from, to], so one outside it is passed over with two compares first.
  const views = mergedIntervals(steps.map((s) => [s.viewStartNs, s.viewEndNs]));
  const from = views[0];
  const to = views[views.length - 1];
  if (nvtx) {
    const { start: starts, end: ends, eventType, tid } = nvtx;
    // An open range (end NaN) reaches to every view's end, as below.
    for (let i = 0, n = nvtx.count; i < n; i++) {
      const start = starts[i];
      if (start > to || ends[i] < from || !inIntervals(views, start, ends[i] === ends[i] ? ends[i] : Infinity)) continue;
      if (!RANGE_TYPES.has(eventType[i]) || tid[i] < 0) continue;
      for (const s of steps) {
        const end = nvtx.end[i] === nvtx.end[i] ? nvtx.end[i] : s.viewEndNs;
        if (nvtx.pid[i] !== s.pid || !inView(s, start, end)) continue;
        const text = nvtx.texts[nvtx.text[i]] ?? '';
        const kind = text === GC_RANGE ? 'gc' : text === GIL_WAIT_RANGE ? 'gil_wait' : 'nvtx';
        pushHost(s, { tid: nvtx.tid[i], kind, name: names.intern(text), startNs: start, endNs: end });
      }
    }
  }
  for (const g of gil) {
    if (g.wait) continue;
    for (const s of steps) {
      const end = g.end ?? s.viewEndNs;
      if (g.pid === s.pid && inView(s, g.start, end)) pushHost(s, { tid: g.tid, kind: 'gil_hold', name: names.intern('Holding GIL'), startNs: g.start, endNs: end });
    }
  }
  const api = loaded.apiCalls();
  const blocking = new Map<number, string | null>();
  const callStart = api.start;
  // A call overlapping a view starts at most the longest call's duration before it.
  const rows = candidateRows(callStart, api.count, order, steps.map((s) => [s.viewStartNs, s.viewEndNs]), order.maxDurationNs);
  for (let r = 0; r < rows.length; r += 2) for (let i = rows[r]; i < rows[r + 1]; i++) syncCall(i);

  function syncCall(i: number): void {
    // In some step's view first (a few compares), then its name (a map lookup): most calls are in none.
    const end = callEnd(api, i);
    if (callStart[i] > to || end < from || !inIntervals(views, callStart[i], end)) return;
    const id = api.nameId[i];
    let name = blocking.get(id);
    if (name === undefined) {
      const raw = loaded.stringOf(id) ?? '';
      blocking.set(id, (name = isBlockingSyncApi(raw) ? raw : null));
    }
    if (name === null) return;
    for (const s of steps) if (api.pid[i] === s.pid && inView(s, api.start[i], end)) pushHost(s, { tid: api.tid[i], kind: 'sync', name: names.intern(name), startNs: api.start[i], endNs: end });
  }
}

export interface StepTimelineInput {
  rows: readonly IterationRow[];
  findings: FindingsResult | null;
  gaps: GapAnalysis;
  /** The gaps' host-cause rows (every NVTX range with a thread but the GIL holds), null when not read. */
  nvtx: NvtxColumns | null;
  /** GIL ranges (`hostRanges.gilCandidates`): the holds that overlap another thread's wait. */
  gil: readonly GilRange[];
  classifier: CategoryClassifier;
  /** The `layers` part's split with spans (`LayerOptions.spans`): each drawn step gets its layer lane. */
  layers?: LayersAnalysis | null;
}

/**
 * The layer split of the row at `index` (the `layers` part's steps are the rows, index for index),
 * when it has spans; undefined otherwise.
 */
export function timelineLayers(layers: LayersAnalysis | null | undefined, rows: readonly IterationRow[], row: IterationRow): TimelineLayers | undefined {
  const step = layers?.steps[rows.indexOf(row)];
  if (!step?.spans || step.iter !== row.iter || step.pid !== row.pid) return undefined;
  return {
    source: step.source,
    ...(step.fit ? { fit: step.fit } : {}),
    layerCount: step.layers.length,
    passes: step.layers.reduce((a, f) => a + f.passes, 0),
    spans: numberedSpans(step),
  };
}

/**
 * Kernel-level timelines of a few steps (`pickTimelineSteps`) from the loaded columns: the GPU ops
 * each launched, the gaps between them with their cause, and the host ranges of the same process.
 */
export function stepTimeline(loaded: LoadedExport, input: StepTimelineInput): StepTimeline {
  const { picks, cited } = pickTimelineSteps(input.rows, input.findings);
  const executors = new Map(input.gaps.threads.map((t) => [t.pid, t.executorTid]));
  const steps = picks.map((p) => emptyStep(p.row, p.reasons, executors.get(p.row.pid) ?? null));
  if (input.layers) {
    picks.forEach((p, i) => {
      const lane = timelineLayers(input.layers, input.rows, p.row);
      if (lane) steps[i].layers = lane;
    });
  }
  // The page holds each kernel and range name once.
  const names = new InternedStrings();
  const categories = [...input.classifier.categories, ...['memcpy', 'memset'].filter((c) => !input.classifier.categories.includes(c))];
  if (steps.length) {
    const api = loaded.apiCalls();
    const order = callOrderOf(api);
    addOps(loaded, steps, input.classifier, names, categories, order);
    addHostRanges(loaded, steps, names, input.nvtx, input.gil, order);
  }
  for (const s of steps) {
    s.gaps = input.gaps.gaps.filter((g) => g.pid === s.pid && inView(s, g.startNs, g.endNs)).map((g) => ({ deviceId: g.deviceId, startNs: g.startNs, endNs: g.endNs, cause: g.cause }));
  }
  return { steps, categories, names: names.list, citedIterations: cited };
}
