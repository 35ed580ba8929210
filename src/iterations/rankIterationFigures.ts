/**
 * Per process of one export with iterations: what the cross-rank view (src/ranks) needs from it,
 * the `rankFigures` part of the analysis.
 */

import { WindowIndex } from './windowIndex.js';
import { sessionStartEpochNs } from '../load/infoReads.js';
import { forEachKernelNamed, forEachLaunchOfKernelsNamed, kernelNames } from '../load/kernelReads.js';
import type { LoadedExport } from '../load/loadedExport.js';
import { Float64Buffer } from '../math/durationStats.js';
import type { CategoryClassifier } from '../categories/rules.js';
import type { IterationAnalysis } from './types.js';

/** The category whose kernels are collectives (NCCL and custom all-reduce kernels in the default table). */
export const COMMUNICATION_CATEGORY = 'communication';

/** One rank's figures for one iteration: what the cross-rank view needs, nothing more. */
export interface RankIterationFigures {
  iter: number;
  wallNs: number;
  /** Union of the rank's GPU work inside the iteration window. */
  gpuBusyNs: number;
  /** Kernel time launched in the iteration (sums to the categories). */
  kernelNs: number;
  /** Kernel time of the communication category (collectives). */
  communicationNs: number;
}

/**
 * When each of the rank's collective kernels ran, grouped by iteration (iteration k of
 * `iterations` owns `startNs/endNs[offsets[k] .. offsets[k+1])`, in start order). Times are ns
 * from the rank's own session start: add the session's UTC start to compare ranks.
 */
export interface CollectiveTimes {
  offsets: Int32Array;
  startNs: Float64Array;
  endNs: Float64Array;
}

/** Per rank: its per-iteration figures (structured-clone safe: plain data, typed arrays, bigint). */
export interface RankFigures {
  file: string;
  /** `export`: read from an nsys export; `summary`: from an `iterscope summarize` JSON (no timestamps). */
  source: 'export' | 'summary';
  /** `TARGET_INFO_SESSION_START_TIME.utcEpochNs` (ns since 1970; beyond 2^53, hence bigint). */
  sessionStartUtcNs: bigint | null;
  communicationCategory: string;
  /** Process the iterations were found in (null for summaries). */
  pid: number | null;
  iterations: RankIterationFigures[];
  collectives: CollectiveTimes | null;
  notes: string[];
}

/**
 * String ids of the kernel names the classifier files under `category`. Only integer ids: an id
 * stored as text (a damaged or edited export) names no kernel and is never passed on to SQL.
 */
function collectiveNameIds(loaded: LoadedExport, classifier: CategoryClassifier, category: string): number[] {
  const cat = classifier.categories.indexOf(category);
  if (cat < 0) return [];
  return [...kernelNames(loaded)].filter(([id, name]) => Number.isSafeInteger(id) && classifier.classify(name) === cat).map(([id]) => id);
}

/**
 * Start and end of every collective kernel, placed in the iteration whose window holds the CUDA
 * API call that launched it (as `attributeGpuWork` places all GPU work: correlationId + PID ->
 * runtime row -> call start). Reads only the collective kernels and their launch calls.
 */
export function collectiveTimes(loaded: LoadedExport, analysis: IterationAnalysis, classifier: CategoryClassifier, category = COMMUNICATION_CATEGORY): CollectiveTimes | null {
  const ids = collectiveNameIds(loaded, classifier, category);
  const rows = analysis.iterations;
  if (ids.length === 0 || !loaded.hasTable('CUPTI_ACTIVITY_KIND_RUNTIME')) return null;
  // Launch call start by (pid, correlationId); the first row wins (2022.x backtrace duplicates).
  const launch = new Map<number, number>();
  const key = (pid: number, corr: number) => pid * 2 ** 32 + corr;
  forEachLaunchOfKernelsNamed(loaded, ids, (pid, corr, start) => {
    const k = key(pid, corr);
    if (!launch.has(k)) launch.set(k, start);
  });
  // Launch windows: an iteration's window runs to the next one's start, the last one to its end.
  const windows = new WindowIndex(rows);
  const rowOf = (pid: number, t: number) => windows.at(pid, t);
  const perRow: { s: Float64Buffer; e: Float64Buffer }[] = rows.map(() => ({ s: new Float64Buffer(8), e: new Float64Buffer(8) }));
  forEachKernelNamed(loaded, ids, (start, end, corr, pid) => {
    if (corr == null) return;
    const t = launch.get(key(pid, corr));
    if (t === undefined) return;
    const r = rowOf(pid, t);
    if (r < 0) return;
    perRow[r].s.push(start);
    perRow[r].e.push(end);
  });
  const offsets = new Int32Array(rows.length + 1);
  for (let i = 0; i < rows.length; i++) offsets[i + 1] = offsets[i] + perRow[i].s.length;
  const startNs = new Float64Array(offsets[rows.length]);
  const endNs = new Float64Array(offsets[rows.length]);
  perRow.forEach((b, i) => {
    startNs.set(b.s.view(), offsets[i]);
    endNs.set(b.e.view(), offsets[i]);
  });
  return { offsets, startNs, endNs };
}

/**
 * The ranks in one export, from its iteration analysis: one `RankFigures` per process with iteration windows (one export per
 * rank gives one; a single nsys capture of several local ranks gives one per process, by PID).
 * Each holds the iteration analysis's figures (busy time, kernel time, collective time) plus when
 * each collective kernel ran, for the arrival estimate.
 */
export function rankFiguresFromIterations(loaded: LoadedExport, analysis: IterationAnalysis, classifier: CategoryClassifier, category = COMMUNICATION_CATEGORY): RankFigures[] {
  const notes: string[] = [];
  if (!classifier.categories.includes(category)) notes.push(`${loaded.path}: no category '${category}' in the category table: no collective time`);
  const coll = collectiveTimes(loaded, analysis, classifier, category);
  const utc = sessionStartEpochNs(loaded);
  const pids = [...new Set(analysis.iterations.map((r) => r.pid))].sort((a, b) => a - b);
  return pids.map((pid) => {
    const idx: number[] = [];
    analysis.iterations.forEach((r, i) => {
      if (r.pid === pid) idx.push(i);
    });
    let collectives: CollectiveTimes | null = null;
    if (coll) {
      const offsets = new Int32Array(idx.length + 1);
      idx.forEach((i, k) => (offsets[k + 1] = offsets[k] + coll.offsets[i + 1] - coll.offsets[i]));
      const startNs = new Float64Array(offsets[idx.length]);
      const endNs = new Float64Array(offsets[idx.length]);
      idx.forEach((i, k) => {
        startNs.set(coll.startNs.subarray(coll.offsets[i], coll.offsets[i + 1]), offsets[k]);
        endNs.set(coll.endNs.subarray(coll.offsets[i], coll.offsets[i + 1]), offsets[k]);
      });
      collectives = { offsets, startNs, endNs };
    }
    return {
      file: loaded.path,
      source: 'export' as const,
      sessionStartUtcNs: utc,
      communicationCategory: category,
      pid,
      iterations: idx.map((i) => {
        const r = analysis.iterations[i];
        return { iter: r.iter, wallNs: r.wallNs, gpuBusyNs: r.gpuBusyNs, kernelNs: r.kernelNs, communicationNs: r.categoryNs[category] ?? 0 };
      }),
      collectives,
      notes,
    };
  });
}
