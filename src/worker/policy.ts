/**
 * When an analysis reads in worker threads, and what the NVTX worker computes: the pipeline asks,
 * the loader starts them (nvtxInBackground.ts, readInBackground.ts).
 */
import { LoadedExport, type LoadOptions } from '../load/loadedExport.js';
import type { BackgroundPlan } from './nvtxInBackground.js';
import type { BackgroundOptions } from './backgroundParts.js';
import { builtEntry } from '../builtEntry.js';
import { availableParallelism } from 'node:os';
import { isMainThread } from 'node:worker_threads';
import type { PartEntry, PartName } from '../pipeline/parts.js';
import { planRun } from '../pipeline/plan.js';
import type { AnalysisRequest, NvtxReadMode } from '../pipeline/request.js';

/** NVTX rows up to which the shared columns stay for the whole analysis (see `planRun`). */
export const SHARED_NVTX_ROWS = 2_000_000;

/**
 * NVTX rows from which `nvtxRead: 'auto'` reads them in a worker thread: below it the scan is
 * shorter than starting the worker (~40 ms on the bench machine; pytorch-dense's 123k rows take ~35 ms).
 */
export const BACKGROUND_NVTX_ROWS = 200_000;

/**
 * The NVTX side in a worker thread (src/worker/nvtxInBackground.ts), with the NVTX summary, the
 * iteration ranges and the host ranges (GC/GIL, the gaps' host-cause rows) and, once given the
 * GPU ops and API calls, the NVTX GPU projection and the kernel summary, when asked for, and when
 * the request's `nvtxRead` and the export allow it:
 * - never past SHARED_NVTX_ROWS (there the NVTX work runs before the GPU ops are read, so the two
 *   large working sets are not held at once);
 * - with 'auto', only on the main thread (the multi-export pool already runs a thread per core),
 *   with a second core, and from BACKGROUND_NVTX_ROWS rows (counted by max(rowid): no scan).
 * `columns`: whether the analysis loads the NVTX columns (the worker reads them); without, the
 * worker reads the API calls (where a read worker would have), then computes the `byQuery` parts
 * by query (the iteration ranges, the gaps' host-cause rows), while this thread reads the GPU ops
 * and then builds the API-call index, the busy union and the device timelines (the loader's
 * `precompute`).
 */
export function backgroundPlan(loaded: LoadedExport, request: AnalysisRequest, parts: readonly PartEntry[], columns: boolean): BackgroundPlan | null {
  const mode = request.nvtxRead ?? 'auto';
  if (mode === 'inline' || mode === 'release' || !loaded.hasTable('NVTX_EVENTS')) return null;
  const rows = loaded.rowBound('NVTX_EVENTS');
  if (rows > SHARED_NVTX_ROWS) return null;
  if (mode === 'auto' && (!isMainThread || availableParallelism() < 2 || rows < BACKGROUND_NVTX_ROWS)) return null;
  const entry = nvtxWorkerEntry();
  if (entry === null) return null;
  const inWorker = new Set(parts.filter((p) => p.background && (columns || p.background.byQuery)).map((p) => p.name));
  // In the order this thread takes them (see `planRun`), those that need no launches first: the
  // worker computes them while this thread reads the launches.
  const takenAt = planRun(parts, { largeNvtx: false, inBackground: (name) => inWorker.has(name as PartName) }).map((p) => p.part.name);
  const bgParts = parts
    .flatMap((p) => (p.background && inWorker.has(p.name) ? [{ name: p.name, usesLaunches: p.background.usesLaunches }] : []))
    .sort((a, b) => Number(a.usesLaunches) - Number(b.usesLaunches) || takenAt.indexOf(a.name) - takenAt.indexOf(b.name));
  if (!columns && bgParts.length === 0) return null;
  const options: BackgroundOptions = { kernels: request.kernels ?? {}, rangeSpec: request.selection?.rangeSpec };
  // A worker that only queries reads the API calls too, first, where a read worker would have.
  const apiCalls = !columns && parts.some((p) => p.loads?.includes('apiCalls')) && loaded.apiCallsWorthASecondCore();
  return { entry, columns, apiCalls, parts: bgParts, options };
}

/** The NVTX worker's entry file (it serves the read workers too), or null when it is not built. */
function nvtxWorkerEntry(): string | null {
  try {
    return builtEntry('iterscope-nvtx.mjs', 'src/worker/backgroundWorker.js');
  } catch {
    return null;
  }
}

/** API calls from which `nvtxRead: 'auto'` reads them (or the projection's launches) in a worker (as BACKGROUND_NVTX_ROWS). */
export const BACKGROUND_LAUNCH_ROWS = 200_000;

/**
 * The read workers (src/worker/readInBackground.ts) an analysis may start when no NVTX worker takes
 * the launches (the loader checks, `readWorkerEntry`): none with 'inline' or without the built
 * entry; with 'auto' only on the main thread with a second core (the multi-export pool already
 * runs a thread per core) and from BACKGROUND_LAUNCH_ROWS API calls; 'release' and 'background'
 * from any size (so tests reach them on small exports).
 */
export function readWorkersFor(mode: NvtxReadMode, readsApiCalls: boolean): LoadOptions['readWorkers'] {
  const entry = mode === 'inline' ? null : nvtxWorkerEntry();
  if (entry === null || (mode === 'auto' && (!isMainThread || availableParallelism() < 2))) return undefined;
  return { entry, apiCalls: readsApiCalls, minApiCalls: mode === 'auto' ? BACKGROUND_LAUNCH_ROWS : 0 };
}

/**
 * Whether the NVTX GPU projection would read its launches by query, no GPU op columns being read
 * before it (past SHARED_NVTX_ROWS, or no part reads the GPU ops: `nvtx --gpu`): then a read worker
 * folds them while this thread reads the NVTX (where the loader's `readWorkers` allow one).
 */
export function projectionQueriesLaunches(loaded: LoadedExport, mode: NvtxReadMode, readsLaunches: boolean): boolean {
  return mode === 'release' || loaded.rowBound('NVTX_EVENTS') > SHARED_NVTX_ROWS || !readsLaunches;
}
