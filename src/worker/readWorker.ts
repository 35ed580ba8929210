import { workerData } from 'node:worker_threads';
import { loadApiCallColumns } from '../load/apiCallColumns.js';
import { excludedRows } from '../export/excludedRows.js';
import type { BackgroundReads, BackgroundReadTask, ReadReply, ReadWorkerData } from './readInBackground.js';
import { queriedLaunchedCalls } from '../load/projectionReads.js';
import { keepCallsWithGpuWork, type LaunchedCalls } from '../load/launchedCalls.js';
import { collectGarbage, COLLECT_FROM_ROWS } from '../v8/collectGarbage.js';
import type { LoadedExport } from '../load/loadedExport.js';

/**
 * The read worker's side (readInBackground.ts): run by the NVTX worker's entry when its worker data
 * says so (`isReadWorkerData`).
 */

/** The value of `task`. */
function read(task: BackgroundReadTask, loaded: LoadedExport, launchIds: boolean): BackgroundReads[BackgroundReadTask] {
  return task === 'launches' ? launchesWithGpuWork(loaded) : loadApiCallColumns(loaded.handle, { launchIds });
}

/**
 * The projection's launched calls, only those that launched GPU work (`keepCallsWithGpuWork`): the
 * thread they are handed to holds them beside the NVTX columns. The fold's key index (8-12 bytes a
 * call), garbage once the fold returns, is collected before the copy when the calls are many: on
 * the 10x bench export, a copy made beside it raised `report`'s peak RSS (703-709 MB against 689-692).
 */
function launchesWithGpuWork(loaded: LoadedExport): LaunchedCalls {
  const all = queriedLaunchedCalls(loaded);
  if (all.count >= COLLECT_FROM_ROWS) collectGarbage();
  return keepCallsWithGpuWork(all);
}

/** The buffers under the typed arrays among `value`'s fields (each once): they cross back by transfer, not copy. */
function arrayBuffersOf(value: object): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  for (const v of Object.values(value)) if (ArrayBuffer.isView(v) && v.buffer instanceof ArrayBuffer) buffers.add(v.buffer);
  return [...buffers];
}

/** Open the export, read, post the value by transfer, raise the flag (whatever happens). */
export async function runReadWorker(): Promise<void> {
  const { readTask, file, flag, port, launchIds } = workerData as ReadWorkerData;
  let reply: ReadReply = { excluded: [] };
  let transfer: ArrayBuffer[] = [];
  try {
    // Imported here, not at the top (as the NVTX worker does): a module that fails to load is then an error reply too.
    const { openExport } = await import('../export/openExport.js');
    const { LoadedExport } = await import('../load/loadedExport.js');
    const h = openExport(file);
    try {
      const loaded = new LoadedExport(h);
      const value = read(readTask, loaded, launchIds === true);
      reply = { value, excluded: excludedRows(h) };
      transfer = arrayBuffersOf(value);
      loaded.close();
    } finally {
      h.close();
    }
  } catch (err) {
    reply = { error: err instanceof Error ? err.message : String(err), excluded: [] };
  }
  try {
    port.postMessage(reply, transfer);
  } finally {
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
    port.close();
  }
}
