import { MessageChannel, receiveMessageOnPort, type MessagePort, type Worker } from 'node:worker_threads';
import { startWorker } from './workerExecArgv.js';
import { loopCompilation } from '../v8/loopCompilation.js';
import type { ExportHandle } from '../export/openExport.js';
import { noteExcludedRows, type ExcludedRows } from '../export/excludedRows.js';
import type { ApiCallColumns } from '../load/apiCallColumns.js';
import type { GpuOpColumns } from '../load/gpuOpColumns.js';

/**
 * The NVTX side of an analysis on a second core. On pytorch-dense-long the NVTX scan (850k rows)
 * is the longest read of `report`, and the parts built from NVTX alone (the NVTX summary, the host
 * ranges the gaps read, the NVTX GPU projection with the GPU ops and API calls, the kernel summary
 * from the GPU ops) need neither the iterations nor the gaps. A worker thread (`runNvtxWorker`,
 * nvtxWorker.ts) opens the same file read-only on its own connection and, while this thread reads
 * the GPU ops and API calls and then computes the iterations and the gaps:
 * 1. reads the NVTX columns (step 0);
 * 2. computes the parts it was given (steps 1..), in order; those that read the GPU ops or API
 *    calls once this thread has posted them (`postLaunches`).
 * Columns cross over SharedArrayBuffers (`columnMaker`): both threads read the same memory,
 * neither writes it after loading. What a part computes is the caller's (the pipeline hands the
 * worker an entry that runs its parts, see `BackgroundPlan.entry`): the loader owns the thread,
 * the shared memory and the protocol.
 *
 * The analysis stays synchronous: a consumer blocks on a shared flag (`Atomics.wait`) and takes the
 * reply with `receiveMessageOnPort`. Any failure of the worker (it cannot open the file, an error,
 * no answer in time) makes the consumer do that work on this thread, as without a worker: the
 * result and the errors are the same.
 */

/** The GPU ops and API calls the worker's parts read, posted once both are loaded (over shared memory). */
export interface SharedLaunches {
  gpuOps: GpuOpColumns;
  apiCalls: ApiCallColumns;
}

/** One part the worker computes after the columns, and whether it waits for the launches. */
export interface BackgroundPart {
  name: string;
  /** Reads the GPU ops or API calls: computed once they are posted. */
  usesLaunches: boolean;
}

/** How to run the NVTX side in a worker: the entry file (it calls `runNvtxWorker`) and the parts it computes. */
export interface BackgroundPlan {
  /** The worker entry's file (see `builtEntry`). */
  entry: string;
  /**
   * Whether the worker reads the NVTX columns first (step 0, shared with this thread). Without,
   * its parts read NVTX by query, on its connection (the analysis loads no NVTX columns).
   */
  columns: boolean;
  /**
   * Whether the worker reads the API calls first (step 1, into shared memory), for this thread
   * while it reads the GPU ops: when the worker only queries (no columns), it has the time, and one
   * worker less is started (see readInBackground.ts for the read worker otherwise).
   */
  apiCalls: boolean;
  parts: readonly BackgroundPart[];
  /** Plain data the entry's parts read (structured-clone safe). */
  options: unknown;
}

/**
 * What the worker posts after each step: with the rows its connection left out so far (NULL or
 * unusable times...), which this thread notes for its own export (`noteExcludedRows`).
 */
export type BackgroundReply = { step: number; value?: unknown; error?: string; excluded?: ExcludedRows[] };

/** What the worker gets (`workerData`). */
export interface NvtxWorkerData {
  file: string;
  columns: boolean;
  apiCalls: boolean;
  /** One per step (0: the columns; 1: the API calls; k: part k - 2): raised once its reply is posted. */
  flags: Int32Array;
  port: MessagePort;
  parts: readonly BackgroundPart[];
  options: unknown;
}

/** How long a consumer waits for the worker before doing the work itself (a safety net, not a budget). */
const WAIT_LIMIT_MS = 120_000;

/** The step of the columns, then of the API calls; part k is step `workerPartStep(k)`. */
export const COLUMNS_STEP = 0;
export const API_CALLS_STEP = 1;

/** The step of the plan's part k. */
export function workerPartStep(k: number): number {
  return k + 2;
}

/**
 * A worker reading one export's NVTX side. Held by that export's `LoadedExport`: started with
 * `start`, its steps taken with `take`, let go with `cancel`.
 */
export class NvtxWorkerRead {
  private readonly steps = new Set<number>();
  private readonly replies = new Map<number, BackgroundReply>();
  private launchesPosted = false;
  private cancelled = false;

  private constructor(
    private readonly handle: ExportHandle,
    private readonly plan: BackgroundPlan,
    private readonly port: MessagePort,
    private readonly flags: Int32Array,
    private readonly worker: Worker,
    /** Sets back what `loopCompilation` set for this worker (`forAnalysisThreads`). */
    private readonly loopsBack: () => void,
  ) {
    if (plan.columns) this.steps.add(COLUMNS_STEP);
    if (plan.apiCalls) this.steps.add(API_CALLS_STEP);
    plan.parts.forEach((_, k) => this.steps.add(workerPartStep(k)));
  }

  /**
   * Starts reading `handle`'s NVTX columns in a worker thread, then the plan's parts. Null
   * (nothing started) when the export is not a file a second connection can open (the in-memory
   * image of a WAL-mode file) or has no NVTX_EVENTS.
   */
  static start(handle: ExportHandle, plan: BackgroundPlan): NvtxWorkerRead | null {
    const db = handle.sqlite;
    if (db.memory || !db.name || !handle.hasTable('NVTX_EVENTS')) return null;
    const flags = new Int32Array(new SharedArrayBuffer(4 * workerPartStep(plan.parts.length)));
    const { port1, port2 } = new MessageChannel();
    const workerData: NvtxWorkerData = { file: db.name, columns: plan.columns, apiCalls: plan.apiCalls, flags, port: port2, parts: plan.parts, options: plan.options };
    // This thread and the worker compute at once from here on, until the worker is let go.
    const loopsBack = loopCompilation.forAnalysisThreads(2);
    let worker: Worker;
    try {
      worker = startWorker(plan.entry, { workerData, transferList: [port2] });
    } catch (err) {
      loopsBack();
      throw err;
    }
    // The process may end without the replies (an error elsewhere): the worker does not hold it open.
    worker.unref();
    port1.unref();
    return new NvtxWorkerRead(handle, plan, port1, flags, worker, loopsBack);
  }

  /** Whether the columns (step 0) were asked of the worker and not taken yet. */
  columnsPending(): boolean {
    return this.steps.has(COLUMNS_STEP);
  }

  /** Whether part `name` was given to the worker and not taken yet. */
  hasPart(name: string): boolean {
    const k = this.plan.parts.findIndex((p) => p.name === name);
    return k >= 0 && this.steps.has(workerPartStep(k));
  }

  /** Whether the API calls were asked of the worker and not taken yet. */
  apiCallsPending(): boolean {
    return this.steps.has(API_CALLS_STEP);
  }

  /** Whether a step is not taken yet (this thread will wait for the worker). */
  busy(): boolean {
    return this.steps.size > 0;
  }

  /** Whether the worker's parts read the GPU ops or API calls (this thread's, over shared memory). */
  takesLaunches(): boolean {
    return this.plan.parts.some((p) => p.usesLaunches);
  }

  /** Whether some part not taken yet waits for the launches (and they were not posted). */
  wantsLaunches(): boolean {
    return !this.launchesPosted && this.plan.parts.some((p, k) => p.usesLaunches && this.steps.has(workerPartStep(k)));
  }

  /** Hands the GPU ops and API calls (over shared memory) to the worker. The columns must not change after this. */
  postLaunches(launches: SharedLaunches): boolean {
    if (!this.wantsLaunches() || this.cancelled) return false;
    this.port.postMessage(launches);
    this.launchesPosted = true;
    return true;
  }

  /** The columns read in the worker (waiting for them), or undefined (read them here). */
  takeColumns<T>(): T | undefined {
    return this.take<T>(COLUMNS_STEP);
  }

  /** The API calls read in the worker (waiting for them), or undefined (read them here). */
  takeApiCalls<T>(): T | undefined {
    return this.take<T>(API_CALLS_STEP);
  }

  /**
   * Part `name`'s value (waiting for it); undefined when it was not given, cannot come (the parts
   * come once the columns are taken, those reading the launches once they are posted: the caller
   * computes it itself then), the worker failed it or did not answer in time.
   */
  takePart<T>(name: string): T | undefined {
    const k = this.plan.parts.findIndex((p) => p.name === name);
    if (k < 0) return undefined;
    if (this.steps.has(COLUMNS_STEP)) return undefined;
    if (this.plan.parts[k].usesLaunches && !this.launchesPosted) return undefined;
    return this.take<T>(workerPartStep(k));
  }

  /** A failed step lets the worker go: the later steps build on it. */
  private take<T>(step: number): T | undefined {
    if (!this.steps.has(step)) return undefined;
    this.steps.delete(step);
    let reply: BackgroundReply | undefined;
    if (!this.cancelled && Atomics.wait(this.flags, step, 0, WAIT_LIMIT_MS) !== 'timed-out') {
      // Each reply is posted before its flag is raised: it is on the port, maybe after earlier ones.
      for (let m = receiveMessageOnPort(this.port); m; m = receiveMessageOnPort(this.port)) {
        const got = m.message as BackgroundReply;
        this.replies.set(got.step, got);
        if (got.step === step) break;
      }
      reply = this.replies.get(step);
      this.replies.delete(step);
    }
    for (const x of reply?.excluded ?? []) noteExcludedRows(this.handle, x.table, x.count, x.why);
    if (!reply || reply.error !== undefined || this.steps.size === 0) this.cancel();
    return reply?.error === undefined ? (reply?.value as T | undefined) : undefined;
  }

  /** Lets the worker go (replies not taken are dropped). */
  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.steps.clear();
    this.port.close();
    void this.worker.terminate();
    this.loopsBack();
  }
}
