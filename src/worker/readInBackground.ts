import { MessageChannel, receiveMessageOnPort, type MessagePort, type Worker } from 'node:worker_threads';
import type { ExportHandle } from '../export/openExport.js';
import type { ApiCallColumns } from '../load/apiCallColumns.js';
import { noteExcludedRows, type ExcludedRows } from '../export/excludedRows.js';
import type { LaunchedCalls } from '../load/launchedCalls.js';
import { startWorker } from './workerExecArgv.js';

/**
 * One read of the export on a second core, while this thread reads something else, for an analysis
 * whose NVTX worker, if any, takes no launches (no NVTX columns read: the worker queries, and reads
 * the API calls itself when the plan says so, `BackgroundPlan.apiCalls`; or NVTX columns too large
 * to be held with the GPU ops: past SHARED_NVTX_ROWS the NVTX parts run first and the GPU ops
 * after, with no NVTX worker). A worker (the NVTX worker's entry; its side is
 * readWorker.ts) opens the file read-only on its own connection, reads, and transfers the typed
 * arrays back (no copy, nothing shared after):
 * - `launches`: the NVTX GPU projection's API calls with their GPU work folded in (`foldOpsIntoCalls`
 *   over the projection's queries), while this thread reads the NVTX columns (8 s of the 10x bench
 *   export's `report`, on one thread);
 * - `apiCalls`: the API-call columns, while this thread reads the GPU ops.
 * Any failure (the worker cannot open the file, an error, no answer in time) makes this thread read
 * it itself, as without a worker: the result and the notes are the same.
 */
export interface BackgroundReads {
  launches: LaunchedCalls;
  apiCalls: ApiCallColumns;
}
export type BackgroundReadTask = keyof BackgroundReads;

/** What the worker gets (`workerData`). */
export interface ReadWorkerData {
  readTask: BackgroundReadTask;
  file: string;
  flag: Int32Array;
  port: MessagePort;
  /** The API calls with their launch-id check (`ApiCallColumns.launchIds`). */
  launchIds?: boolean;
}

/** The worker's reply: the value, or the error; with the rows its connection left out (unusable times). */
export interface ReadReply {
  value?: unknown;
  error?: string;
  excluded: ExcludedRows[];
}

/** How long a reader waits for the worker before reading itself (a safety net, not a budget). */
const WAIT_LIMIT_MS = 120_000;

/** The worker data of a read worker, if `data` is one (the NVTX worker's entry serves both). */
export function isReadWorkerData(data: unknown): data is ReadWorkerData {
  return typeof data === 'object' && data !== null && typeof (data as { readTask?: unknown }).readTask === 'string';
}

/** A worker reading one thing of one export. Held by that export's `LoadedExport`. */
export class ReadInBackground<T extends BackgroundReadTask> {
  private done = false;
  private constructor(
    private readonly handle: ExportHandle,
    private readonly port: MessagePort,
    private readonly flag: Int32Array,
    private readonly worker: Worker,
  ) {}

  /**
   * Starts the worker (`entry`: the NVTX worker's entry file); null when the export is not a file a
   * second connection can open. `launchIds`: see `ReadWorkerData`.
   */
  static start<T extends BackgroundReadTask>(handle: ExportHandle, entry: string, task: T, opts: { launchIds?: boolean } = {}): ReadInBackground<T> | null {
    const db = handle.sqlite;
    if (db.memory || !db.name) return null;
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const { port1, port2 } = new MessageChannel();
    const data: ReadWorkerData = { readTask: task, file: db.name, flag, port: port2, ...(opts.launchIds ? { launchIds: true } : {}) };
    const worker = startWorker(entry, { workerData: data, transferList: [port2] });
    worker.unref();
    port1.unref();
    return new ReadInBackground<T>(handle, port1, flag, worker);
  }

  /** The value (waiting for it), or undefined: read it here. Taken once. */
  take(): BackgroundReads[T] | undefined {
    if (this.done) return undefined;
    let reply: ReadReply | undefined;
    if (Atomics.wait(this.flag, 0, 0, WAIT_LIMIT_MS) !== 'timed-out') reply = receiveMessageOnPort(this.port)?.message as ReadReply | undefined;
    this.cancel();
    for (const x of reply?.excluded ?? []) noteExcludedRows(this.handle, x.table, x.count, x.why);
    return reply?.value as BackgroundReads[T] | undefined;
  }

  /** Lets the worker go (a reply not taken is dropped). */
  cancel(): void {
    if (this.done) return;
    this.done = true;
    this.port.close();
    void this.worker.terminate();
  }
}
