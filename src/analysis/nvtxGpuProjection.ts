import { durationStats, Float64Buffer } from '../math/durationStats.js';
import { nvtxRangeLabel, nvtxStyleOf, type NvtxStyle } from './nvtxSummary.js';
import type { LoadedExport } from '../load/loadedExport.js';
import { isNvtxRange, nvtxRowId, type NvtxColumns } from '../load/nvtxEventColumns.js';
import { domainKey } from '../load/domainKeys.js';
import { nvtxDomains } from '../load/nvtxReads.js';
import { forEachNvtxLabelPart, forEachProjectionRange, graphTraceRows, launchedCallsOf, PROJECTION_OP_TABLES } from '../load/projectionReads.js';
import { pidOfHi, ThreadIndex, type LaunchedCalls } from '../load/launchedCalls.js';
import { Column } from '../columns/typedColumn.js';

/** One row of `nsys stats -r nvtx_gpu_proj_sum`. Avg/Med/StdDev and the averages are not rounded. */
export interface NvtxGpuProjectionRow {
  /** `Domain:Text` (`:Text` for the default domain), as nsys prints it. */
  range: string;
  style: NvtxStyle;
  /** Sum of projected durations (GPU time from the first op's start to the last op's end). */
  totalProjNs: number;
  /** Sum of the ranges' own (CPU) durations. */
  totalRangeNs: number;
  instances: number;
  projAvg: number;
  projMed: number;
  projMin: number;
  projMax: number;
  projStdDev: number;
  /** Sum over instances of the distinct API calls (correlation ids) with GPU work in the range. */
  totalGpuOps: number;
  avgGpuOps: number;
  /** Mean nesting level (0 = outermost projected range on its thread); NaN if no instance has one. */
  avgRangeLvl: number;
  /** Mean number of direct children that have a projection. */
  avgNumChild: number;
}

/** One projected range instance: a row of `nsys stats -r nvtx_gpu_proj_trace`. */
export interface NvtxGpuProjectionInstance {
  /** NVTX_EVENTS rowid (nsys's RangeId). */
  rangeId: number;
  range: string;
  style: NvtxStyle;
  pid: number;
  tid: number;
  /** The range on the CPU; `end` is the NVTX end of time for a range never closed. */
  start: number;
  end: number;
  projStart: number;
  projEnd: number;
  projDuration: number;
  /** Distinct correlation ids of the API calls inside the range that launched GPU work. */
  numGpuOps: number;
  /** Stack level, 0 at the root; null when the parent chain loops (identical ranges), as in nsys. */
  level: number | null;
  /** rowid of the tightest enclosing projected range on the same thread, or null. */
  parentId: number | null;
  /** Direct children that have a projection. */
  numChild: number;
}

/** What went in and what could not be attributed. */
export interface NvtxGpuProjectionCoverage {
  /** Range events (types 59/60/70/71) considered: same-thread end, with a thread, in the pid filter. */
  candidateRanges: number;
  /** Start/end ranges ended on another thread (`endGlobalTid` set): nsys leaves them out. */
  crossThreadRanges: number;
  /** Candidates without an end, closed at the NVTX end of time. */
  unclosedRanges: number;
  /** Candidates that enclose at least one API call with GPU work (= projected instances). */
  projectedRanges: number;
  /** Kernel, memcpy and memset rows (graph-level traces are not GPU ops here, as in nsys). */
  gpuOps: number;
  /** GPU ops with no CUDA API row of the same process and correlation id (trimmed exports). */
  gpuOpsWithoutApiCall: number;
  /** API calls that launched at least one GPU op. */
  apiCallsWithGpuOps: number;
  /** Of those, calls inside no candidate range, and the GPU ops they launched. */
  apiCallsOutsideRanges: number;
  gpuOpsOutsideRanges: number;
  /** `CUPTI_ACTIVITY_KIND_GRAPH_TRACE` rows (whole-graph launches), which nsys does not project. */
  graphTraceRowsIgnored: number;
  /** (process, correlation id) pairs that more than one API row carries. */
  duplicateCorrelationIds: number;
}

export interface NvtxGpuProjection {
  /** Grouped by (range, style), by total projected time desc, then range, then style. */
  rows: NvtxGpuProjectionRow[];
  /** Per-instance projections (only with `includeInstances`), by projected start asc, duration desc. */
  instances?: NvtxGpuProjectionInstance[];
  coverage: NvtxGpuProjectionCoverage;
  /** End of time for unclosed ranges: max(max(start), max(end)) over NVTX range events. */
  maxTimestampNs: number | null;
  /** Tables the projection needs that this export lacks (empty result then). */
  missingTables: string[];
}

export interface NvtxGpuProjectionOptions {
  /** Only ranges, API calls and GPU ops of this OS process. */
  pid?: number;
  /** Also return the projected range instances. */
  includeInstances?: boolean;
}


/** Growable Uint32 column. */
class Uint32Buffer {
  private buf = new Uint32Array(1024);
  length = 0;
  push(v: number): void {
    if (this.length === this.buf.length) {
      const next = new Uint32Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length++] = v;
  }
  view(): Uint32Array {
    return this.buf.subarray(0, this.length);
  }
}

/**
 * `items` (default 0..n-1) ordered by thread, then by start (stable). Counting sort by thread; each thread's
 * segment is sorted only if it is not already in start order (exports usually are).
 * Returns the order and, per thread, the segment bounds `offsets[t]..offsets[t+1]`.
 */
function orderByThreadThenStart(items: Uint32Array | null, thread: ArrayLike<number>, start: Float64Array, nThreads: number): { order: Uint32Array; offsets: Uint32Array } {
  const n = items ? items.length : thread.length;
  const offsets = new Uint32Array(nThreads + 1);
  for (let k = 0; k < n; k++) offsets[thread[items ? items[k] : k] + 1]++;
  for (let t = 0; t < nThreads; t++) offsets[t + 1] += offsets[t];
  const fill = offsets.slice(0, nThreads);
  const order = new Uint32Array(n);
  for (let k = 0; k < n; k++) {
    const i = items ? items[k] : k;
    order[fill[thread[i]]++] = i;
  }
  for (let t = 0; t < nThreads; t++) {
    const seg = order.subarray(offsets[t], offsets[t + 1]);
    if (!inStartOrder(seg, start)) seg.sort((a, b) => start[a] - start[b] || a - b);
  }
  return { order, offsets };
}

/** Whether `seg` lists items in start order (a function of its own: its loop is optimized once, for every thread). */
function inStartOrder(seg: Uint32Array, start: Float64Array): boolean {
  for (let k = 1; k < seg.length; k++) if (start[seg[k]] < start[seg[k - 1]]) return false;
  return true;
}

/** Orders strings by code point, i.e. as SQLite's BINARY collation orders their UTF-8 bytes. */
function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (>= 0xD800 < 0xE000) stand for code points above 0xFFFF: they sort after 0xE000-0xFFFF.
    const xs = x >= 0xd800 && x < 0xe000 ? x + 0x10000 : x;
    const ys = y >= 0xd800 && y < 0xe000 ? y + 0x10000 : y;
    return xs - ys;
  }
  return a.length - b.length;
}

function emptyCoverage(): NvtxGpuProjectionCoverage {
  return {
    candidateRanges: 0,
    crossThreadRanges: 0,
    unclosedRanges: 0,
    projectedRanges: 0,
    gpuOps: 0,
    gpuOpsWithoutApiCall: 0,
    apiCallsWithGpuOps: 0,
    apiCallsOutsideRanges: 0,
    gpuOpsOutsideRanges: 0,
    graphTraceRowsIgnored: 0,
    duplicateCorrelationIds: 0,
  };
}

/**
 * The candidate ranges of the projection. The arrays are indexed by range index r; `items` lists
 * the candidates. From the shared NVTX columns the index is the column row and the arrays are the
 * columns themselves (no copy of millions of ranges); from the query, index = candidate number.
 */
interface ProjectionRanges {
  items: Uint32Array;
  /** Range r's NVTX_EVENTS rowid. */
  rowIdOf: (r: number) => number;
  rStart: Float64Array;
  /** NaN: unclosed (read through the end of time). */
  rEnd: Float64Array;
  /** Each range's thread (`ThreadIndex`), by row: in two bytes while there are at most 65,536 threads. */
  rThread: ThreadsOfRows;
  rType: ArrayLike<number>;
  /** True when r is a row of the shared NVTX columns (labels come from there); else read by rowid. */
  fromColumns: boolean;
  /** Latest start and end over every range event (valid times), whatever the filters. */
  maxStart: number;
  maxEnd: number;
}

/**
 * The candidate ranges: event types 59/60/70/71 with usable times, a thread, in the pid filter,
 * not ended on another thread (`endGlobalTid IS NULL`, as nsys). From the shared NVTX columns
 * (no second scan of NVTX_EVENTS) unless their rows disagree on the bits above the PID.
 */
function collectRanges(loaded: LoadedExport, threads: ThreadIndex, coverage: NvtxGpuProjectionCoverage, pid: number | undefined): ProjectionRanges {
  const c = loaded.nvtx();
  if (c.upperBits === null) return queryRanges(loaded, threads, coverage, pid);
  const { items, maxStart, maxEnd, crossThread } = projectableRows(c, pid);
  coverage.crossThreadRanges += crossThread;
  const rThread = threadsOfRows(c, items, threads, c.upperBits * 16777216);
  return { items, rowIdOf: (r) => nvtxRowId(c, r), rStart: c.start, rEnd: c.end, rThread, rType: c.eventType, fromColumns: true, maxStart, maxEnd };
}

/**
 * The NVTX rows that can be projected (ranges on a known thread, of `pid` when given, ending on
 * their own thread), the latest start and end of every range, and the ranges that ended on
 * another thread (added, not branched on: such a range coming late would deoptimize the loop).
 */
function projectableRows(c: NvtxColumns, pid: number | undefined): { items: Uint32Array; maxStart: number; maxEnd: number; crossThread: number } {
  // Sized for every row: no doubling, no trimmed copy (memory first touched is time); the rows
  // left out leave the tail untouched.
  const rows = new Uint32Array(c.count);
  let n = 0;
  let maxStart = -Infinity;
  let maxEnd = -Infinity;
  let crossThread = 0;
  for (let i = 0; i < c.count; i++) {
    if (!isNvtxRange(c.eventType[i])) continue;
    const start = c.start[i];
    const end = c.end[i];
    if (start > maxStart) maxStart = start;
    if (end > maxEnd) maxEnd = end; // NaN compares false
    if (c.tid[i] < 0) continue;
    if (pid !== undefined && c.pid[i] !== pid) continue;
    const cross = c.endTid[i] !== 0;
    crossThread += cross ? 1 : 0;
    if (cross) continue;
    rows[n++] = i;
  }
  return { items: rows.subarray(0, n), maxStart, maxEnd, crossThread };
}

/** Thread indexes by row: a `Uint16Array` while every index fits (on the 10x bench export's 8M rows, 17 MB less), else a `Uint32Array`. */
type ThreadsOfRows = Uint16Array | Uint32Array;

/**
 * Each projectable row's thread (`threads` index; `upper`: the bits above the PID every row shares),
 * by row (a pass of its own, optimized once). Indexes are handed out 0, 1, 2, ...: the 65,537th
 * thread moves the rows to 32 bits.
 */
export function threadsOfRows(c: NvtxColumns, items: Uint32Array, threads: ThreadIndex, upper: number): ThreadsOfRows {
  let rThread: ThreadsOfRows = new Uint16Array(c.count);
  for (let k = 0; k < items.length; k++) {
    const i = items[k];
    const t = threads.intern(upper + c.pid[i], c.tid[i]);
    if (t > 0xffff && rThread instanceof Uint16Array) rThread = Uint32Array.from(rThread);
    rThread[i] = t;
  }
  return rThread;
}

/** `collectRanges` by its own query (rows that differ in the bits above the PID). */
function queryRanges(loaded: LoadedExport, threads: ThreadIndex, coverage: NvtxGpuProjectionCoverage, pid: number | undefined): ProjectionRanges {
  const rRowid = new Float64Buffer(1024);
  const rStartB = new Float64Buffer(1024);
  const rEndB = new Float64Buffer(1024);
  const rThreadB = new Uint32Buffer();
  const rTypeB = new Uint32Buffer();
  let maxStart = -Infinity;
  let maxEnd = -Infinity;
  forEachProjectionRange(
    loaded,
    (rowId: number, start: number | null, end: number | null, hi: number | null, lo: number | null, eventType: number, sameThread: number) => {
      if (start != null && start > maxStart) maxStart = start;
      if (end != null && end > maxEnd) maxEnd = end;
      if (start == null || hi == null || lo == null) return;
      if (pid !== undefined && pidOfHi(hi) !== pid) return;
      if (!sameThread) {
        coverage.crossThreadRanges++;
        return;
      }
      rRowid.push(rowId);
      rStartB.push(start);
      rEndB.push(end ?? NaN);
      rThreadB.push(threads.intern(hi, lo));
      rTypeB.push(eventType);
    },
  );
  const n = rRowid.length;
  const items = new Uint32Array(n);
  for (let k = 0; k < n; k++) items[k] = k;
  const rowids = rRowid.view();
  return { items, rowIdOf: (r) => rowids[r], rStart: rStartB.view(), rEnd: rEndB.view(), rThread: rThreadB.view(), rType: rTypeB.view(), fromColumns: false, maxStart, maxEnd };
}

/** Labels of the projected ranges from the shared NVTX columns. */
function labelsFromColumns(loaded: LoadedExport, proj: Uint32Array): Map<number, string> {
  const label = new Map<number, string>();
  if (proj.length === 0) return label;
  const c = loaded.nvtx();
  const domains = nvtxDomains(loaded);
  for (const i of proj) {
    const t = c.text[i];
    label.set(i, nvtxRangeLabel(domains.get(domainKey(c.domainId[i], c.pid[i])) ?? null, t >= 0 ? c.texts[t] : null));
  }
  return label;
}

/** Labels of the projected ranges read by rowid. */
function labelsFromQuery(loaded: LoadedExport, proj: Uint32Array, rowIdOf: (r: number) => number): Map<number, string> {
  const label = new Map<number, string>();
  if (proj.length === 0) return label;
  const projIdxByRowid = new Map<number, number>();
  for (const r of proj) projIdxByRowid.set(rowIdOf(r), r);
  const domainOf = new Map<number, number>();
  const textIdOf = new Map<number, number>();
  const textOf = new Map<number, string | null>();
  forEachNvtxLabelPart(
    loaded,
    Array.from(proj, (r) => rowIdOf(r)),
    (rowId: number, domainId: number | null, rpid: number, textId: number | null, text: string | null) => {
      const r = projIdxByRowid.get(rowId)!;
      domainOf.set(r, domainKey(domainId, rpid));
      if (textId != null) textIdOf.set(r, textId);
      textOf.set(r, text);
    },
  );
  const domains = nvtxDomains(loaded);
  const strings = loaded.strings(new Set(textIdOf.values()));
  for (const r of proj) {
    const tid = textIdOf.get(r);
    const text = (tid !== undefined ? strings.get(tid) : undefined) ?? textOf.get(r) ?? null;
    label.set(r, nvtxRangeLabel(domains.get(domainOf.get(r)!) ?? null, text));
  }
  return label;
}

/** The API calls that launched GPU work on a thread with candidate ranges: call indices, and each one's thread. */
interface LaunchingCalls {
  calls: LaunchedCalls;
  /** Indices (into `calls`) of those calls. */
  items: Uint32Array;
  /** Per call index: its range thread index (`calls.thread`, renumbered in place; set for `items` only). */
  thread: Int32Array;
}

/**
 * Step 2 of the projection: the calls with GPU work on a thread with candidate ranges; coverage
 * counts the ops without a call and the calls on other threads. The calls are indexed where they
 * are (no copy of millions of calls).
 */
function launchingCallsOnRangeThreads(calls: LaunchedCalls, threads: ThreadIndex, coverage: NvtxGpuProjectionCoverage): LaunchingCalls {
  coverage.gpuOps = calls.gpuOps;
  coverage.gpuOpsWithoutApiCall = calls.gpuOpsWithoutApiCall;
  coverage.duplicateCorrelationIds = calls.duplicateCorrelationIds;
  const { thread, opCount } = calls;
  // The calls' threads as range threads (-1: a thread without candidate ranges).
  const rangeThread = calls.threadHi.map((hi, k) => threads.find(hi, calls.threadLo[k]));
  const items = new Uint32Array(calls.count);
  let n = 0;
  for (let i = 0; i < calls.count; i++) {
    if (opCount[i] === 0) continue;
    coverage.apiCallsWithGpuOps++;
    const t = rangeThread[thread[i]];
    if (t < 0) {
      coverage.apiCallsOutsideRanges++;
      coverage.gpuOpsOutsideRanges += opCount[i];
      continue;
    }
    thread[i] = t;
    items[n++] = i;
  }
  return { calls, items: items.subarray(0, n), thread };
}

/**
 * Step 3 of the projection: per thread, one sweep over the calls and the ranges, both in start
 * order, with the list of ranges open at the call; every range containing the call gets its GPU
 * work. Returns the projected start and end and the GPU ops of each range that got work, in
 * slots (`ProjectedSpans`: a few thousand of a million ranges get work).
 */
function sweepCallsThroughRanges(
  calls: LaunchingCalls,
  R: { order: Uint32Array; offsets: Uint32Array },
  nThreads: number,
  rStart: Float64Array,
  rEnd: Float64Array,
  coverage: NvtxGpuProjectionCoverage,
): ProjectedSpans {
  const { start: cStart, end: cEnd, opStart: cOpStart, opEnd: cOpEnd, opCount: cOpCount, sharedKey: cDup, keyOf } = calls.calls;
  const C = orderByThreadThenStart(calls.items, calls.thread, cStart, nThreads);
  const spans = new ProjectedSpans();
  const dupCorrs = new Map<number, Set<number>>();
  const active: number[] = [];
  for (let t = 0; t < nThreads; t++) {
    let rp = R.offsets[t];
    const rEndOff = R.offsets[t + 1];
    active.length = 0;
    for (let k = C.offsets[t]; k < C.offsets[t + 1]; k++) {
      const c = C.order[k];
      const cs = cStart[c];
      const ce = cEnd[c];
      while (rp < rEndOff && rStart[R.order[rp]] <= cs) active.push(R.order[rp++]);
      let w = 0;
      let hits = 0;
      for (let a = 0; a < active.length; a++) {
        const r = active[a];
        const re = rEnd[r];
        if (re < cs) continue; // closed before this call: before every later one too
        active[w++] = r;
        if (re >= ce) {
          hits++;
          const sl = spans.slotOf.get(r) ?? spans.add(r);
          if (cOpStart[c] < spans.start.data[sl]) spans.start.data[sl] = cOpStart[c];
          if (cOpEnd[c] > spans.end.data[sl]) spans.end.data[sl] = cOpEnd[c];
          if (cDup[c]) {
            let s = dupCorrs.get(r);
            if (!s) dupCorrs.set(r, (s = new Set()));
            s.add(keyOf.get(c)!);
          } else spans.ops.data[sl]++;
        }
      }
      active.length = w;
      if (hits === 0) {
        coverage.apiCallsOutsideRanges++;
        coverage.gpuOpsOutsideRanges += cOpCount[c];
      }
    }
  }
  for (const [r, s] of dupCorrs) spans.ops.data[spans.slotOf.get(r)!] += s.size;
  return spans;
}

/**
 * The projected ranges' spans and GPU ops, in slots given on first work (`slotOf.get(r)`; none:
 * no work). A Map, not an array by range: a few thousand of millions of ranges get work (an Int32
 * per range was 34 MB on the 10x bench export's 8.5M rows, held beside the NVTX columns).
 */
class ProjectedSpans {
  readonly slotOf = new Map<number, number>();
  readonly start = new Column((n) => new Float64Array(n), 1024);
  readonly end = new Column((n) => new Float64Array(n), 1024);
  readonly ops = new Column((n) => new Uint32Array(n), 1024);
  private count = 0;
  /** A slot for range `r` (first start +Infinity, last end -Infinity, no ops). */
  add(r: number): number {
    const sl = this.count++;
    for (const col of [this.start, this.end, this.ops]) col.ensure(sl + 1);
    this.start.data[sl] = Infinity;
    this.end.data[sl] = -Infinity;
    this.ops.data[sl] = 0;
    this.slotOf.set(r, sl);
    return sl;
  }
  /** Start, end and GPU ops of the ranges `proj`, by position. */
  byPosition(proj: Uint32Array): { projStart: Float64Array; projEnd: Float64Array; numOps: Uint32Array } {
    const n = proj.length;
    const projStart = new Float64Array(n);
    const projEnd = new Float64Array(n);
    const numOps = new Uint32Array(n);
    for (let k = 0; k < n; k++) {
      const sl = this.slotOf.get(proj[k])!;
      projStart[k] = this.start.data[sl];
      projEnd[k] = this.end.data[sl];
      numOps[k] = this.ops.data[sl];
    }
    return { projStart, projEnd, numOps };
  }
}

/**
 * Reproduces `nsys stats -r nvtx_gpu_proj_sum` (and, per instance, `nvtx_gpu_proj_trace`): each
 * NVTX range is projected onto the GPU work launched from inside it.
 *
 * As nsys's 2024+ report SQL does:
 * - ranges are event types 59/60/70/71 with `endGlobalTid IS NULL`; a missing end becomes the
 *   latest NVTX range timestamp;
 * - GPU ops are kernels, memcpys and memsets (not whole-graph trace rows), joined to their API call
 *   on correlation id and process (`op.globalPid = call.globalTid & ~0xFFFFFF`);
 * - an op belongs to every range on the call's thread that fully contains the API call;
 * - per range: projected start = first op start, duration = last op end - that, GPU ops = distinct
 *   correlation ids; ranges with no op are left out;
 * - parent = the tightest enclosing projected range on the same thread (lowest rowid on a tie),
 *   level = depth from the root, NumChild = projected direct children.
 *
 * Work: ranges, API calls and GPU ops are each streamed once (`forEachRow`) into typed arrays;
 * ops are folded into their API call through a (process, correlation id) map, giving each call the
 * first start and last end of its GPU work; then, per thread, one sweep over the calls and the
 * ranges, both in start order, with the list of ranges open at the call. No ranges x calls join,
 * no SQLite sort or temporary index. Avg/Med/StdDev and the averages are not rounded (nsys prints
 * them with one decimal).
 */
export function projectNvtxOntoGpu(loaded: LoadedExport, opts: NvtxGpuProjectionOptions = {}): NvtxGpuProjection {
  loaded.requireContract('nvtxGpuProjection');
  // The NVTX columns counted the rows with unusable times (and noted them) as they were read.
  if (loaded.hasTable('NVTX_EVENTS')) loaded.nvtx();
  const coverage = emptyCoverage();
  const opTables = PROJECTION_OP_TABLES.filter((t) => loaded.hasTable(t));
  const missingTables = missingProjectionTables(loaded, opTables);
  coverage.graphTraceRowsIgnored = graphTraceRows(loaded, opts.pid);
  if (missingTables.length > 0) return { rows: [], ...(opts.includeInstances ? { instances: [] } : {}), coverage, maxTimestampNs: null, missingTables };
  const pid = opts.pid;

  // ---- 1. Ranges -------------------------------------------------------------------------------
  const threads = new ThreadIndex();
  const ranges = collectRanges(loaded, threads, coverage, pid);
  const { items, rowIdOf, rStart, rThread, rType, maxStart, maxEnd } = ranges;
  // nsys: max(max(start), max(end)) — NULL (unclosed ranges then match nothing) when no range has an end.
  const maxTs = maxEnd === -Infinity || maxStart === -Infinity ? null : Math.max(maxStart, maxEnd);
  const rEnd = closeUnclosedRanges(ranges, maxTs, coverage);
  coverage.candidateRanges = items.length;

  // ---- 2-3. API calls with their GPU work, swept against the ranges of their thread ----------
  // nsys joins `op.globalPid = call.globalTid & ~0xFFFFFF`: equal `>> 24` halves, and a globalPid
  // whose thread part is 0. Calls are keyed by (that half, correlation id).
  const nThreads = threads.size;
  const R = orderByThreadThenStart(items, rThread, rStart, nThreads);
  const upper = ranges.fromColumns ? loaded.nvtx().upperBits : null;
  const launched = launchedCallsOf(loaded, pid, opTables, upper);
  const spans = sweepCallsThroughRanges(launchingCallsOnRangeThreads(launched, threads, coverage), R, nThreads, rStart, rEnd, coverage);

  // ---- 4. Hierarchy among projected ranges -----------------------------------------------------
  const proj = projectedInThreadStartOrder(spans.slotOf, rThread, rStart);
  const { projStart, projEnd, numOps } = spans.byPosition(proj);
  coverage.projectedRanges = proj.length;
  const { parent, numChild } = tightestParents(proj, { rowIdOf, rStart, rEnd, rThread });
  const level = rangeLevels(parent);

  // ---- 5. Names of projected ranges -------------------------------------------------------------
  const label = ranges.fromColumns ? labelsFromColumns(loaded, proj) : labelsFromQuery(loaded, proj, rowIdOf);

  // ---- 6. Summary --------------------------------------------------------------------------------
  const projected: ProjectedRanges = { proj, rowIdOf, rStart, rEnd, rThread, rType, projStart, projEnd, numOps, parent, numChild, level, label };
  const result: NvtxGpuProjection = { rows: summaryRows(projected), coverage, maxTimestampNs: maxTs, missingTables };
  if (opts.includeInstances) result.instances = projectedInstances(projected, threads);
  return result;
}

/** The tables the projection needs that the export lacks (`opTables`: the GPU-op tables it has). */
function missingProjectionTables(loaded: LoadedExport, opTables: readonly string[]): string[] {
  const missingTables: string[] = [];
  if (!loaded.hasTable('NVTX_EVENTS')) missingTables.push('NVTX_EVENTS');
  if (!loaded.hasTable('CUPTI_ACTIVITY_KIND_RUNTIME')) missingTables.push('CUPTI_ACTIVITY_KIND_RUNTIME');
  if (opTables.length === 0) missingTables.push(PROJECTION_OP_TABLES.join(' | '));
  return missingTables;
}

/**
 * The range ends with every unclosed candidate ending at `maxTs` (NaN when there is none), counted
 * in coverage. On a copy when the ends are the shared NVTX columns', which other analyses read.
 */
function closeUnclosedRanges(ranges: ProjectionRanges, maxTs: number | null, coverage: NvtxGpuProjectionCoverage): Float64Array {
  const { items } = ranges;
  let rEnd = ranges.rEnd;
  for (let k = 0; k < items.length; k++) {
    const r = items[k];
    if (!Number.isNaN(rEnd[r])) continue;
    if (coverage.unclosedRanges++ === 0 && ranges.fromColumns) rEnd = rEnd.slice();
    rEnd[r] = maxTs ?? NaN;
  }
  return rEnd;
}

/**
 * The ranges that received GPU work (the keys of `slotOf`), in the order `orderByThreadThenStart`
 * gives them: by thread index, then start, then range index (its ranges come in ascending index).
 */
function projectedInThreadStartOrder(slotOf: ReadonlyMap<number, number>, rThread: ThreadsOfRows, rStart: Float64Array): Uint32Array {
  const projected = Uint32Array.from(slotOf.keys());
  return projected.sort((a, b) => rThread[a] - rThread[b] || rStart[a] - rStart[b] || a - b);
}

/**
 * Per projected range (by position k in `proj`), the position of its tightest enclosing projected
 * range on the same thread (-1: none; lowest rowid on a tie) and its count of direct children. By
 * position, not range index: a few thousand of a million ranges are projected. Every range
 * enclosing a projected range encloses its calls too, so is projected: parents can be searched
 * among projected ranges only. Tightness (c.start-p.start)+(p.end-c.end) is dur(p) - dur(c): the
 * tightest parent is the shortest enclosing range. One sweep per thread with the list of ranges
 * open at each start.
 */
function tightestParents(
  proj: Uint32Array,
  r: { rowIdOf: (r: number) => number; rStart: Float64Array; rEnd: Float64Array; rThread: ThreadsOfRows },
): { parent: Int32Array; numChild: Uint32Array } {
  const { rowIdOf, rStart, rEnd, rThread } = r;
  const n = proj.length;
  const parent = new Int32Array(n).fill(-1);
  const numChild = new Uint32Array(n);
  const active: number[] = []; // positions
  let p = 0;
  for (let k = 0; k < n; k++) {
    const c = proj[k];
    if (k === 0 || rThread[proj[k - 1]] !== rThread[c]) {
      active.length = 0;
      p = k;
    }
    const cs = rStart[c];
    const ce = rEnd[c];
    while (p < n && rThread[proj[p]] === rThread[c] && rStart[proj[p]] <= cs) active.push(p++);
    let w = 0;
    let best = -1;
    let bestDur = Infinity;
    for (let a = 0; a < active.length; a++) {
      const qk = active[a];
      const q = proj[qk];
      if (rEnd[q] < cs) continue;
      active[w++] = qk;
      if (qk === k || rEnd[q] < ce) continue;
      const d = rEnd[q] - rStart[q];
      if (d < bestDur || (d === bestDur && rowIdOf(q) < rowIdOf(proj[best]))) {
        best = qk;
        bestDur = d;
      }
    }
    active.length = w;
    parent[k] = best;
    if (best >= 0) numChild[best]++;
  }
  return { parent, numChild };
}

/** Level of a range whose parent chain loops: none (NULL in nsys). */
const NO_LEVEL = -2;

/**
 * Per projected range (by position, as `parent`), its depth from the root: walk up to a root or a
 * known level. A loop (identical ranges are each other's tightest parent) leaves the level
 * NO_LEVEL, as nsys's recursive CTE never reaches those ranges.
 */
function rangeLevels(parent: Int32Array): Int32Array {
  const n = parent.length;
  const level = new Int32Array(n).fill(-1); // -1 unknown, NO_LEVEL none
  const onPath = new Uint8Array(n);
  const path: number[] = [];
  for (let k0 = 0; k0 < n; k0++) {
    if (level[k0] !== -1) continue;
    path.length = 0;
    let k = k0;
    let base: number;
    for (;;) {
      if (level[k] !== -1) {
        base = level[k];
        break;
      }
      if (onPath[k]) {
        base = NO_LEVEL;
        break;
      }
      onPath[k] = 1;
      path.push(k);
      if (parent[k] < 0) {
        base = -1;
        break;
      }
      k = parent[k];
    }
    for (let i = path.length - 1; i >= 0; i--) {
      onPath[path[i]] = 0;
      base = base === NO_LEVEL ? NO_LEVEL : base + 1;
      level[path[i]] = base;
    }
  }
  return level;
}

/** The projected ranges (`proj`) and everything the summary and the instances read: by range index, or by position in `proj`. */
interface ProjectedRanges {
  proj: Uint32Array;
  rowIdOf: (r: number) => number;
  rStart: Float64Array;
  rEnd: Float64Array;
  rThread: ThreadsOfRows;
  rType: ArrayLike<number>;
  /** By position in `proj` (not range index): the span and GPU ops, the parent's position, the children, the level. */
  projStart: Float64Array;
  projEnd: Float64Array;
  numOps: Uint32Array;
  parent: Int32Array;
  numChild: Uint32Array;
  level: Int32Array;
  label: Map<number, string>;
}

/** The summary rows: projected ranges grouped by (name, style), by total projected time desc. */
function summaryRows(p: ProjectedRanges): NvtxGpuProjectionRow[] {
  interface Group {
    range: string;
    style: NvtxStyle;
    proj: Float64Buffer;
    rangeNs: number;
    ops: number;
    lvlSum: number;
    lvlN: number;
    childSum: number;
  }
  const groups = new Map<string, Group>();
  for (let k = 0; k < p.proj.length; k++) {
    const r = p.proj[k];
    const style = nvtxStyleOf(p.rType[r]);
    const range = p.label.get(r) ?? '';
    const key = `${style}\u0000${range}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { range, style, proj: new Float64Buffer(), rangeNs: 0, ops: 0, lvlSum: 0, lvlN: 0, childSum: 0 }));
    g.proj.push(p.projEnd[k] - p.projStart[k]);
    g.rangeNs += p.rEnd[r] - p.rStart[r];
    g.ops += p.numOps[k];
    if (p.level[k] !== NO_LEVEL) {
      g.lvlSum += p.level[k];
      g.lvlN++;
    }
    g.childSum += p.numChild[k];
  }
  const rows: NvtxGpuProjectionRow[] = [...groups.values()].map((g) => {
    const s = durationStats(g.proj.view());
    return {
      range: g.range,
      style: g.style,
      totalProjNs: s.total,
      totalRangeNs: g.rangeNs,
      instances: s.count,
      projAvg: s.avg,
      projMed: s.med,
      projMin: s.min,
      projMax: s.max,
      projStdDev: s.stdDev,
      totalGpuOps: g.ops,
      avgGpuOps: g.ops / s.count,
      avgRangeLvl: g.lvlN > 0 ? g.lvlSum / g.lvlN : NaN,
      avgNumChild: g.childSum / s.count,
    };
  });
  // nsys: GROUP BY (name, style) then ORDER BY total desc; ties keep the group order.
  return rows.sort((a, b) => b.totalProjNs - a.totalProjNs || compareCodePoints(a.range, b.range) || compareCodePoints(a.style, b.style));
}

/** One row per projected range, by projected start asc, then duration desc, then range id. */
function projectedInstances(p: ProjectedRanges, threads: ThreadIndex): NvtxGpuProjectionInstance[] {
  const { proj, rowIdOf, rThread, projStart, projEnd, parent, level } = p;
  return Array.from(proj, (r, k) => ({
    rangeId: rowIdOf(r),
    range: p.label.get(r) ?? '',
    style: nvtxStyleOf(p.rType[r]),
    pid: threads.pid[rThread[r]],
    tid: threads.tid[rThread[r]],
    start: p.rStart[r],
    end: p.rEnd[r],
    projStart: projStart[k],
    projEnd: projEnd[k],
    projDuration: projEnd[k] - projStart[k],
    numGpuOps: p.numOps[k],
    level: level[k] === NO_LEVEL ? null : level[k],
    parentId: parent[k] >= 0 ? rowIdOf(proj[parent[k]]) : null,
    numChild: p.numChild[k],
  })).sort((a, b) => a.projStart - b.projStart || b.projDuration - a.projDuration || a.rangeId - b.rangeId);
}

/** What the projection left out, as one-line notes (the `nvtx --gpu` table's). */
export function nvtxGpuProjectionNotes(p: NvtxGpuProjection): string[] {
  const c = p.coverage;
  const notes: string[] = [];
  if (p.missingTables.length) notes.push(`the export lacks ${p.missingTables.join(', ')}: nothing to project`);
  if (c.graphTraceRowsIgnored) notes.push(`${c.graphTraceRowsIgnored} whole-graph launches (graph-level CUDA-graph trace) are not projected, as in nsys`);
  if (c.crossThreadRanges) notes.push(`${c.crossThreadRanges} start/end ranges ended on another thread and are left out, as in nsys`);
  if (c.unclosedRanges) notes.push(`${c.unclosedRanges} ranges were never closed; they end at the latest NVTX timestamp`);
  if (c.gpuOpsWithoutApiCall) notes.push(`${c.gpuOpsWithoutApiCall} GPU ops have no CUDA API row (time-trimmed export?) and cannot be projected`);
  if (c.apiCallsOutsideRanges) notes.push(`${c.apiCallsOutsideRanges} API calls (${c.gpuOpsOutsideRanges} GPU ops) were made outside every NVTX range`);
  return notes;
}

/** What the NVTX GPU projection could not see, as one-line notes. */
export function projectionCoverageNotes(p: NvtxGpuProjection | null): string[] {
  if (!p) return [];
  if (p.missingTables.length) return [`skipped: the export has no ${p.missingTables.join(', ')}`];
  const c = p.coverage;
  const out: string[] = [];
  if (c.gpuOps) out.push(`${c.gpuOps - c.gpuOpsOutsideRanges - c.gpuOpsWithoutApiCall} of ${c.gpuOps} GPU ops launched inside an NVTX range`);
  if (c.gpuOpsWithoutApiCall) out.push(`${c.gpuOpsWithoutApiCall} GPU ops have no CUDA API row and are not projected`);
  if (c.graphTraceRowsIgnored) out.push(`${c.graphTraceRowsIgnored} whole-graph launches are not projected (as in nsys)`);
  if (c.crossThreadRanges) out.push(`${c.crossThreadRanges} start/end ranges ended on another thread and are left out (as in nsys)`);
  return out;
}
