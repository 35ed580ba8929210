import { MessageChannel, receiveMessageOnPort, type MessagePort, type Worker } from 'node:worker_threads';
import type { ExportHandle } from '../../queries/handle.js';
import { noteExcludedRows, type ExcludedRows } from './excludedRows.js';
import type { LaunchedCalls } from './launchedCalls.js';
import { startWorker } from './workerExecArgv.js';

/**
 * The NVTX GPU projection's launch side on a second core, for an export whose NVTX columns are too
 * large to be held with the GPU ops (past SHARED_NVTX_ROWS the NVTX parts run before the GPU ops
 * are read, so the projection reads its launches by query: 8 s of the 10x bench export's `report`,
 * one thread, while nothing else ran). A worker opens the file read-only on its own connection and
 * folds the GPU ops into their API calls (`foldOpsIntoCalls` over the projection's queries) while
 * this thread reads the NVTX columns; the arrays cross back by transfer (no copy, nothing shared
 * after; the worker side is launchesWorker.ts). Any failure (the worker cannot start or open the file, an error, no answer in time)
 * makes the projection read them itself, as without a worker: the result and the notes are the same.
 */

/** What the worker gets (`workerData`). */
export interface LaunchesWorkerData {
  task: 'launches';
  file: string;
  flag: Int32Array;
  port: MessagePort;
}

/** The worker's reply: the calls, or the error; with the rows its connection left out (unusable times). */
export interface LaunchesReply {
  value?: LaunchedCalls;
  error?: string;
  excluded: ExcludedRows[];
}

/** How long the projection waits for the worker before reading the launches itself (a safety net, not a budget). */
const WAIT_LIMIT_MS = 120_000;

/** The worker data of a launches worker, if `data` is one (the NVTX worker's entry serves both). */
export function isLaunchesWorkerData(data: unknown): data is LaunchesWorkerData {
  return typeof data === 'object' && data !== null && (data as { task?: unknown }).task === 'launches';
}

/** A worker folding one export's GPU ops into their API calls. Held by that export's `LoadedExport`. */
export class LaunchesInBackground {
  private done = false;
  private constructor(
    private readonly handle: ExportHandle,
    private readonly port: MessagePort,
    private readonly flag: Int32Array,
    private readonly worker: Worker,
  ) {}

  /** Starts the worker (`entry`: the NVTX worker's entry file); null when the export is not a file a second connection can open. */
  static start(handle: ExportHandle, entry: string): LaunchesInBackground | null {
    const db = handle.sqlite;
    if (db.memory || !db.name) return null;
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const { port1, port2 } = new MessageChannel();
    const data: LaunchesWorkerData = { task: 'launches', file: db.name, flag, port: port2 };
    const worker = startWorker(entry, { workerData: data, transferList: [port2] });
    worker.unref();
    port1.unref();
    return new LaunchesInBackground(handle, port1, flag, worker);
  }

  /** The calls (waiting for them), or undefined: read them here. Taken once. */
  take(): LaunchedCalls | undefined {
    if (this.done) return undefined;
    let reply: LaunchesReply | undefined;
    if (Atomics.wait(this.flag, 0, 0, WAIT_LIMIT_MS) !== 'timed-out') reply = receiveMessageOnPort(this.port)?.message as LaunchesReply | undefined;
    this.cancel();
    for (const x of reply?.excluded ?? []) noteExcludedRows(this.handle, x.table, x.count, x.why);
    return reply?.value;
  }

  /** Lets the worker go (a reply not taken is dropped). */
  cancel(): void {
    if (this.done) return;
    this.done = true;
    this.port.close();
    void this.worker.terminate();
  }
}
