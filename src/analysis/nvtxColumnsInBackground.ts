import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import type { ExportHandle } from '../../queries/handle.js';
import { builtEntry } from '../builtEntry.js';
import { workerExecArgv } from '../load/workerExecArgv.js';
import type { KernelSummary, KernelSummaryOptions } from './kernelSummary.js';
import type { NvtxColumns } from './nvtxColumns.js';
import type { NvtxGpuProjection, SharedLaunches } from './nvtxGpuProjection.js';
import type { NvtxRangesByDomain, NvtxSummary } from './nvtxSummary.js';
import { noteExcludedRows, type ExcludedRows } from '../export/rowChecks.js';

/**
 * The NVTX side of an analysis on a second core. On pytorch-dense-long the NVTX scan (850k rows)
 * is the longest read of `report`, and the NVTX summary and GPU projection are built from it
 * alone (the projection with the GPU ops and API calls): none of them needs the iterations or
 * the gaps. A worker thread (nvtxColumnsWorker.ts) opens the same file read-only on its own
 * connection and, while this thread reads the GPU ops and API calls and then computes the
 * iterations and the gaps:
 * 1. reads the NVTX columns (`loadNvtxColumns`);
 * 2. optionally summarizes them (`summarizeNvtxWithDomains`);
 * 3. optionally projects the NVTX ranges onto the GPU from the GPU ops and API calls this thread
 *    read (posted to it by `projectNvtxInBackground`).
 * Columns cross over SharedArrayBuffers (`columnMaker`): both threads read the same memory,
 * neither writes it after loading.
 *
 * The analysis stays synchronous: a consumer blocks on a shared flag (`Atomics.wait`) and takes the
 * reply with `receiveMessageOnPort`. Any failure of the worker (it cannot open the file, an error,
 * no answer in time) makes the consumer do that work on this thread, as without a worker: the
 * result and the errors are the same.
 */
export enum BackgroundStep {
  Columns = 0,
  Summary = 1,
  Projection = 2,
  Kernels = 3,
}

/**
 * What the worker posts after each step: with the rows its connection left out so far (NULL or
 * unusable times...), which this thread notes for its own export (`noteExcludedRows`).
 */
export type BackgroundReply = { step: BackgroundStep; value?: unknown; error?: string; excluded?: ExcludedRows[] };

interface BackgroundRead {
  port: MessagePort;
  flags: Int32Array;
  worker: Worker;
  /** Steps asked for and not taken yet. */
  steps: Set<BackgroundStep>;
  /** Replies received ahead of the step being taken. */
  replies: Map<BackgroundStep, BackgroundReply>;
  launchesPosted: boolean;
}

const reads = new WeakMap<ExportHandle, BackgroundRead>();

/** How long a consumer waits for the worker before doing the work itself (a safety net, not a budget). */
const WAIT_LIMIT_MS = 120_000;

/** The compiled worker entry (the bundled one inside the CLI bundle, see `builtEntry`). */
function workerEntry(): string {
  return builtEntry('iterscope-nvtx.mjs', 'src/analysis/nvtxColumnsWorker.js');
}

/** What the worker does besides reading the NVTX columns. */
export interface BackgroundSteps {
  /** The NVTX summary (`takeBackgroundNvtxSummary`). */
  summarize?: boolean;
  /** The NVTX GPU projection, once given the launches (`giveLaunchesToBackground`, `takeBackgroundProjection`). */
  project?: boolean;
  /** The kernel summary with these options, once given the launches (`takeBackgroundKernelSummary`). */
  kernels?: KernelSummaryOptions;
}

/**
 * Starts reading `handle`'s NVTX columns in a worker thread, and the `steps` that follow. Returns false (nothing started) when the export is not a file a
 * second connection can open (the in-memory image of a WAL-mode file) or has no NVTX_EVENTS.
 * `nvtxColumnsOf(handle)` then waits for the columns.
 */
export function readNvtxColumnsInBackground(handle: ExportHandle, opts: BackgroundSteps = {}): boolean {
  if (reads.has(handle)) return true;
  const db = handle.sqlite;
  if (db.memory || !db.name || !handle.hasTable('NVTX_EVENTS')) return false;
  let entry: string;
  try {
    entry = workerEntry();
  } catch {
    return false;
  }
  const summarize = opts.summarize === true;
  const project = opts.project === true;
  const kernels = opts.kernels ?? null;
  const flags = new Int32Array(new SharedArrayBuffer(4 * 4));
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(entry, { workerData: { file: db.name, flags, port: port2, summarize, project, kernels }, transferList: [port2], execArgv: workerExecArgv() });
  // The process may end without the replies (an error elsewhere): the worker does not hold it open.
  worker.unref();
  port1.unref();
  const steps = new Set([BackgroundStep.Columns]);
  if (summarize) steps.add(BackgroundStep.Summary);
  if (project) steps.add(BackgroundStep.Projection);
  if (kernels) steps.add(BackgroundStep.Kernels);
  reads.set(handle, { port: port1, flags, worker, steps, replies: new Map(), launchesPosted: false });
  return true;
}

/** Whether step `step` was asked of a worker for `handle` and not taken yet. */
export function hasBackgroundStep(handle: ExportHandle, step: BackgroundStep): boolean {
  return reads.get(handle)?.steps.has(step) === true;
}

/**
 * Takes step `step`'s value (waiting for it); undefined when it was not asked, cannot come yet
 * (the later steps come once the columns are taken; the projection and the kernel summary once
 * the launches are posted: the caller does that step itself then), the worker failed it or did
 * not answer in time. A failed step lets the worker go: the later steps build on it.
 */
function take<T>(handle: ExportHandle, step: BackgroundStep): T | undefined {
  const r = reads.get(handle);
  if (!r || !r.steps.has(step)) return undefined;
  if (step !== BackgroundStep.Columns && r.steps.has(BackgroundStep.Columns)) return undefined;
  if ((step === BackgroundStep.Projection || step === BackgroundStep.Kernels) && !r.launchesPosted) return undefined;
  r.steps.delete(step);
  let reply: BackgroundReply | undefined;
  if (Atomics.wait(r.flags, step, 0, WAIT_LIMIT_MS) !== 'timed-out') {
    // Each reply is posted before its flag is raised: it is on the port, maybe after earlier ones.
    for (let m = receiveMessageOnPort(r.port); m; m = receiveMessageOnPort(r.port)) {
      const got = m.message as BackgroundReply;
      r.replies.set(got.step, got);
      if (got.step === step) break;
    }
    reply = r.replies.get(step);
    r.replies.delete(step);
  }
  for (const x of reply?.excluded ?? []) noteExcludedRows(handle, x.table, x.count, x.why);
  if (!reply || reply.error !== undefined || r.steps.size === 0) cancelBackgroundNvtxRead(handle);
  return reply?.error === undefined ? (reply?.value as T | undefined) : undefined;
}

/** The columns read in the background for `handle` (waiting for them), or undefined (read them here). */
export function takeBackgroundNvtxColumns(handle: ExportHandle): NvtxColumns | undefined {
  return take<NvtxColumns>(handle, BackgroundStep.Columns);
}

/** The NVTX summary computed in the background (waiting for it), or undefined (summarize here). */
export function takeBackgroundNvtxSummary(handle: ExportHandle): { summary: NvtxSummary; rangesByDomain: NvtxRangesByDomain } | undefined {
  return take(handle, BackgroundStep.Summary);
}

/**
 * Hands the GPU ops and API calls (over shared memory: `loadGpuOpColumns` and `loadApiCallColumns`
 * with `shared`) to the worker started with `project` or `kernels`, which computes those from
 * them. The columns must not change after this. False when there is no such worker.
 */
export function giveLaunchesToBackground(handle: ExportHandle, launches: SharedLaunches): boolean {
  const r = reads.get(handle);
  if (!r || !(r.steps.has(BackgroundStep.Projection) || r.steps.has(BackgroundStep.Kernels)) || r.launchesPosted) return false;
  r.port.postMessage(launches);
  r.launchesPosted = true;
  return true;
}

/** The projection computed in the background (waiting for it), or undefined (project here). */
export function takeBackgroundProjection(handle: ExportHandle): NvtxGpuProjection | undefined {
  return take(handle, BackgroundStep.Projection);
}

/** The kernel summary computed in the background (waiting for it), or undefined (summarize here). */
export function takeBackgroundKernelSummary(handle: ExportHandle): KernelSummary | undefined {
  return take(handle, BackgroundStep.Kernels);
}

/** Lets the worker go (replies not taken are dropped); nothing to do when none was started. */
export function cancelBackgroundNvtxRead(handle: ExportHandle): void {
  const r = reads.get(handle);
  if (!r) return;
  reads.delete(handle);
  r.port.close();
  void r.worker.terminate();
}
