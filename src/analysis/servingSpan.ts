import type { LoadedExport } from '../load/loadedExport.js';

import { profilerApiStarted } from '../load/healthReads.js';
import type { LaunchPhases } from './captureHealth.js';
import type { CaptureSettings } from '../load/captureSettings.js';
import { busyOverlap } from '../math/busyIntervals.js';
import { analyzeMemoryTraffic } from './memoryTraffic.js';
import type { CategoryClassifier } from '../categories/rules.js';
import { compactRanges } from '../formatRanges.js';
import type { IterationAnalysis, IterationRow } from '../iterations/types.js';
import { attributeGpuWork, type IterationWindow } from '../iterations/attribute.js';

/**
 * How start-up (model load, warm-up, CUDA-graph capture) was told apart from serving:
 * - `iterations`: the span is the captured steps (iteration markers): work launched before the
 *   first step or after the last is left out;
 * - `graph-capture`: no markers; the span starts with the first GPU work launched after the last
 *   CUDA-graph capture call (serving engines capture their graphs as the last start-up step);
 * - `profiler-window`: no markers, no graph capture in the capture, which the program started
 *   itself (`cudaProfilerStart`, as engines do from the serving loop): all of it is serving;
 * - `none`: none of these: the span is all GPU work, start-up included.
 */
export type ServingBoundary = 'iterations' | 'graph-capture' | 'profiler-window' | 'none';

/** One serving process's part of the span (session ns). */
export interface ProcessSpan {
  pid: number;
  startNs: number;
  endNs: number;
}

/**
 * The serving span of a capture: from the first to the last GPU work of the serving processes,
 * start-up left out when it can be told apart (`boundary`), and what the GPU did in it. With
 * iteration markers it is the captured steps (the iterations table's rows summed); without, one
 * window per process with GPU work, its work placed by launch call as the steps' is.
 */
export interface ServingSpan {
  boundary: ServingBoundary;
  /** One line for people: how start-up was told apart, and how much GPU work it left out. */
  boundaryText: string;
  /** The serving processes (with markers: those with steps; without: those with GPU work). */
  processes: ProcessSpan[];
  startNs: number;
  endNs: number;
  /** endNs - startNs. */
  spanNs: number;
  /** Steps in the span (iteration markers); null without. */
  steps: number | null;
  /** Kernel time (whole-graph launches included, as in the iterations table) of the work launched in the span. */
  kernelNs: number;
  /** Kernel rows (graph-node kernels included); whole-graph launches are `graphLaunches`. */
  kernels: number;
  graphLaunches: number;
  /** Kernel time by category (the categories with time, in table order). */
  categoryNs: Record<string, number>;
  /** Each process's GPU busy union inside its span, summed over processes; idle is the rest of its span. */
  busyNs: number;
  idleNs: number;
  /** busy / (busy + idle): a share of the serving processes' span. */
  busyShare: number;
  idleShare: number;
  /** Copies whose GPU start is in the span, by direction. */
  h2dCopies: number;
  h2dBytes: number;
  d2hCopies: number;
  d2hBytes: number;
  /** cudaMalloc* / cuMemAlloc* calls made in the span. */
  allocationCalls: number;
  /** `--cuda-memory-usage=true` was on (CUDA_GPU_MEMORY_USAGE_EVENTS). */
  allocationsTraced: boolean;
  /** Allocations (non-static memory) in the span and their bytes; null when not traced. */
  allocations: number | null;
  allocationBytes: number | null;
  /** Context and generated tokens of the steps (log, else the markers' labels); null unless every step has the count. */
  contextTokens: number | null;
  generatedTokens: number | null;
  /** Where the steps' counts came from: a joined log record, the marker's label, neither; null without markers. */
  stepCounts: { fromLog: number; fromMarkers: number; unknown: number } | null;
  /** GPU ops not in the span: launched outside it (start-up), by processes outside it, without a launch call in the export. */
  leftOut: { ops: number; ns: number; otherProcessOps: number; noLaunchOps: number };
  notes: string[];
  /** The span's samples (kernel instances), when the request asks (`spanSamples`). */
  samples?: SpanSamples;
}

export interface ServingSpanInput {
  iterations: IterationAnalysis | null;
  /** Graph capture against the work after it (`launchPhases`); null when not read. */
  launches: LaunchPhases | null;
  capture: CaptureSettings;
  classifier: CategoryClassifier;
}

/** What the GPU did in the span, before the copies and allocations are added. */
type SpanWork = Pick<ServingSpan, 'processes' | 'steps' | 'kernelNs' | 'kernels' | 'graphLaunches' | 'categoryNs' | 'busyNs' | 'idleNs' | 'contextTokens' | 'generatedTokens' | 'stepCounts' | 'leftOut'>;

/**
 * The serving span of an export with GPU work (`gpuOps.count > 0`); see `ServingSpan`. Null when
 * no GPU op could be placed in it (none has its CUDA API call in the export).
 */
export function servingSpan(loaded: LoadedExport, input: ServingSpanInput): ServingSpan | null {
  const rows = input.iterations?.iterations ?? [];
  const boundary = rows.length ? { kind: 'iterations' as const, fromNs: -Infinity } : boundaryWithoutSteps(loaded, input);
  const work = rows.length ? workOfSteps(input.iterations!) : workWithoutSteps(loaded, input, boundary.fromNs);
  if (work.processes.length === 0) return null;
  const startNs = Math.min(...work.processes.map((p) => p.startNs));
  const endNs = Math.max(...work.processes.map((p) => p.endNs));
  const occupied = work.busyNs + work.idleNs;
  const traffic = trafficInSpan(loaded, work.processes);
  const notes = spanNotes(work, input.iterations);
  return {
    boundary: boundary.kind,
    boundaryText: boundaryText(boundary.kind, work, input),
    ...work,
    startNs,
    endNs,
    spanNs: endNs - startNs,
    busyShare: occupied > 0 ? work.busyNs / occupied : 0,
    idleShare: occupied > 0 ? work.idleNs / occupied : 0,
    ...traffic,
    notes,
  };
}

/** Without steps: after the last graph capture call, else a profiler-API window, else nothing told apart. */
function boundaryWithoutSteps(loaded: LoadedExport, input: ServingSpanInput): { kind: ServingBoundary; fromNs: number } {
  const l = input.launches;
  if (l && l.captureEndNs !== null && l.opsAfterCapture > 0) return { kind: 'graph-capture', fromNs: l.captureEndNs };
  if (input.capture.profilerApiGated === true || profilerApiStarted(loaded)) return { kind: 'profiler-window', fromNs: -Infinity };
  return { kind: 'none', fromNs: -Infinity };
}

/** The steps summed: the iterations table's rows, each process's span from its first step's start to its last step's end. */
function workOfSteps(it: IterationAnalysis): SpanWork {
  const rows = it.iterations;
  const byPid = new Map<number, ProcessSpan>();
  const categoryNs: Record<string, number> = {};
  let kernelNs = 0, kernels = 0, graphLaunches = 0, busyNs = 0, idleNs = 0;
  for (const r of rows) {
    const p = byPid.get(r.pid);
    if (!p) byPid.set(r.pid, { pid: r.pid, startNs: r.startNs, endNs: r.endNs });
    else {
      p.startNs = Math.min(p.startNs, r.startNs);
      p.endNs = Math.max(p.endNs, r.endNs);
    }
    kernelNs += r.kernelNs;
    kernels += r.kernelCount;
    graphLaunches += r.graphLaunches;
    busyNs += r.gpuBusyNs;
    idleNs += r.gpuIdleNs;
    for (const c of it.categories) if (r.categoryNs[c]) categoryNs[c] = (categoryNs[c] ?? 0) + r.categoryNs[c];
  }
  const cov = it.coverage;
  return {
    processes: [...byPid.values()].sort((a, b) => a.pid - b.pid),
    steps: rows.length,
    kernelNs,
    kernels,
    graphLaunches,
    categoryNs,
    busyNs,
    idleNs,
    ...stepTokens(rows),
    leftOut: { ops: cov.outsideOps, ns: cov.outsideNs, otherProcessOps: cov.otherProcessOps, noLaunchOps: cov.noRuntimeOps },
  };
}

/** The steps' token counts: a sum only when every step has the count (never a partial sum). */
function stepTokens(rows: readonly IterationRow[]): Pick<SpanWork, 'contextTokens' | 'generatedTokens' | 'stepCounts'> {
  const generated = (r: IterationRow) => r.generationTokens ?? r.generationRequests;
  const fromLog = rows.filter((r) => r.matched && generated(r) != null).length;
  const fromMarkers = rows.filter((r) => !(r.matched && generated(r) != null) && generated(r) != null).length;
  return {
    contextTokens: rows.every((r) => r.contextTokens != null) ? rows.reduce((a, r) => a + r.contextTokens!, 0) : null,
    generatedTokens: rows.every((r) => generated(r) != null) ? rows.reduce((a, r) => a + generated(r)!, 0) : null,
    stepCounts: { fromLog, fromMarkers, unknown: rows.length - fromLog - fromMarkers },
  };
}

/**
 * Without steps: one window per process with GPU work, from the boundary on, its GPU work placed
 * by launch call (`attributeGpuWork`, as the steps' is); each process's span runs from the first
 * to the last GPU work launched in it.
 */
function workWithoutSteps(loaded: LoadedExport, input: ServingSpanInput, fromNs: number): SpanWork {
  const ops = loaded.gpuOps();
  const pids = new Set<number>();
  for (let i = 0; i < ops.count; i++) pids.add(ops.pid[i]);
  const windows: IterationWindow[] = [...pids].sort((a, b) => a - b).map((pid, i) => ({ iter: i, pid, tid: -1, startNs: fromNs, endNs: Infinity, launchEndNs: Infinity, rangeEndNs: null, text: '' }));
  const attr = attributeGpuWork(loaded, windows, input.classifier);
  const processes: ProcessSpan[] = [];
  const categoryNs: Record<string, number> = {};
  let kernelNs = 0, kernels = 0, graphLaunches = 0, busyNs = 0, idleNs = 0;
  const nc = attr.categories.length;
  windows.forEach((w, i) => {
    if (!Number.isFinite(attr.firstOpStartNs[i])) return; // nothing launched after the boundary
    const p = { pid: w.pid, startNs: attr.firstOpStartNs[i], endNs: attr.lastOpEndNs[i] };
    processes.push(p);
    const busy = attr.busyByPid.get(w.pid);
    const b = busy ? busyOverlap(busy, p.startNs, p.endNs) : 0;
    busyNs += b;
    idleNs += p.endNs - p.startNs - b;
    kernelNs += attr.kernelNs[i];
    kernels += attr.kernelCount[i];
    graphLaunches += attr.graphLaunches[i];
    for (let c = 0; c < nc; c++) if (attr.categoryNs[i * nc + c]) categoryNs[attr.categories[c]] = (categoryNs[attr.categories[c]] ?? 0) + attr.categoryNs[i * nc + c];
  });
  const cov = attr.coverage;
  return {
    processes,
    steps: null,
    kernelNs,
    kernels,
    graphLaunches,
    categoryNs: Object.fromEntries(attr.categories.filter((c) => categoryNs[c]).map((c) => [c, categoryNs[c]])),
    busyNs,
    idleNs,
    contextTokens: null,
    generatedTokens: null,
    stepCounts: null,
    leftOut: { ops: cov.outsideOps, ns: cov.outsideNs, otherProcessOps: cov.otherProcessOps, noLaunchOps: cov.noRuntimeOps },
  };
}

/** cudaMalloc, cudaMallocAsync, cudaMallocHost, ... and the driver's cuMemAlloc_v2, cuMemAllocAsync, ... */
const ALLOCATION_CALL = /^(cudaMalloc|cuMemAlloc)/;

/**
 * Copies by direction (GPU start in a process's span) and allocations in the span: the memory
 * traffic of the spans as windows (`analyzeMemoryTraffic`), and the allocation calls by name.
 */
function trafficInSpan(loaded: LoadedExport, processes: readonly ProcessSpan[]): Pick<ServingSpan, 'h2dCopies' | 'h2dBytes' | 'd2hCopies' | 'd2hBytes' | 'allocationCalls' | 'allocationsTraced' | 'allocations' | 'allocationBytes'> {
  const mem = analyzeMemoryTraffic(loaded, processes.map((p, i) => ({ iter: i, pid: p.pid, startNs: p.startNs, endNs: p.endNs })));
  const sum = (f: (x: (typeof mem.iterations)[number]) => number) => mem.iterations.reduce((a, x) => a + f(x), 0);
  const spanOf = new Map(processes.map((p) => [p.pid, p]));
  const calls = loaded.apiCalls();
  const isAllocation = new Map<number, boolean>();
  let allocationCalls = 0;
  for (let i = 0; i < calls.count; i++) {
    const p = spanOf.get(calls.pid[i]);
    if (!p || calls.start[i] < p.startNs || calls.start[i] >= p.endNs) continue;
    const id = calls.nameId[i];
    let alloc = isAllocation.get(id);
    if (alloc === undefined) isAllocation.set(id, (alloc = ALLOCATION_CALL.test(loaded.stringOf(id) ?? '')));
    if (alloc) allocationCalls++;
  }
  return {
    h2dCopies: sum((x) => x.h2dCopies),
    h2dBytes: sum((x) => x.h2dBytes),
    d2hCopies: sum((x) => x.d2hCopies),
    d2hBytes: sum((x) => x.d2hBytes),
    allocationCalls,
    allocationsTraced: mem.allocationsTraced,
    allocations: mem.allocationsTraced ? mem.allocationsInIterations : null,
    allocationBytes: mem.allocationsTraced ? mem.allocationBytesInIterations : null,
  };
}

const ms = (ns: number) => `${(ns / 1e6).toFixed(2)} ms`;

/** One line: how start-up was told apart and how much GPU work that left out. */
function boundaryText(kind: ServingBoundary, work: SpanWork, input: ServingSpanInput): string {
  const n = work.leftOut.ops;
  const leftOut = (before: string, what: string) => (n ? `${n} GPU op${n === 1 ? '' : 's'} (${ms(work.leftOut.ns)}) launched ${before} (${what}) ${n === 1 ? 'is' : 'are'} left out` : `no GPU work was launched ${before}`);
  switch (kind) {
    case 'iterations': {
      const it = input.iterations!;
      const iters = it.iterations.map((r) => r.iter).sort((a, b) => a - b);
      // Never a number that is not the engine's: steps numbered in capture order are counted, not named.
      const which = it.coverage.numbering.some((n) => n.source === 'capture-order') ? `${iters.length} steps, unnumbered` : compactRanges(iters);
      return `the captured steps (${which}, ${it.coverage.source.id} markers), from the first step's start to the end of the last step's GPU work; ${leftOut('before the first step or after the last', 'start-up, warm-up')}`;
    }
    case 'graph-capture':
      return `from the first GPU work launched after CUDA-graph capture ended (${ms(input.launches!.captureEndNs!)} into the session; engines capture their graphs last in start-up) to the last; ${leftOut('before', 'model load, warm-up, graph capture')}`;
    case 'profiler-window':
      return 'the whole capture: the program started it itself (cudaProfilerStart, e.g. -c cudaProfilerApi), from its serving loop, so it holds no start-up; from the first to the last GPU work';
    case 'none':
      return 'from the first to the last GPU work: start-up could not be told apart (no iteration markers, no CUDA-graph capture, not started by the program\'s cudaProfilerStart), so model load and warm-up are inside and per-token figures are upper bounds';
  }
}

function spanNotes(work: SpanWork, it: IterationAnalysis | null): string[] {
  const notes: string[] = [];
  const { otherProcessOps: other, noLaunchOps: noLaunch } = work.leftOut;
  if (other) notes.push(`${other} GPU op${other === 1 ? '' : 's'} of processes without steps left out of the span`);
  if (noLaunch) notes.push(`${noLaunch} GPU op${noLaunch === 1 ? ' has' : 's have'} no CUDA API row in the export (time-trimmed?) and could not be placed in the span`);
  if (work.processes.length > 1) notes.push(`${work.processes.length} serving processes (${work.processes.map((p) => `pid ${p.pid}`).join(', ')}): kernel time and copies are summed over them; busy and idle shares are of their spans together`);
  const c = work.stepCounts;
  if (c && it) {
    if (c.fromMarkers && c.fromLog) notes.push(`${c.fromMarkers} steps counted from their markers' labels (no log record with the count)`);
    if (c.unknown) notes.push(`${c.unknown} of ${it.iterations.length} steps have no generation count (no log record and no count in their marker): the steps' token sum is not given`);
  }
  return notes;
}

/**
 * A category's kernel instances: count, total time, and the sum of squared deviations of each
 * instance from its kernel name's mean (sum over names of n * variance): the variance of the total
 * when each name's instance count is taken as measured and only durations vary.
 */
export interface CategoryInstances {
  instances: number;
  totalNs: number;
  withinNameSqNs: number;
}

/**
 * The serving span's samples without iterations (the `kernel instances` basis): each category's
 * kernel instances, and every instance's duration for the top kernel names. Only the serving
 * processes' work starting in their spans counts (whole-graph launches under `cuda_graph`, one name).
 */
export interface SpanSamples {
  categories: Record<string, CategoryInstances>;
  /** Top kernel names by total time: category and every instance's duration (ns), in start order. */
  kernelInstances: { name: string; category: string; durations: number[] }[];
}
