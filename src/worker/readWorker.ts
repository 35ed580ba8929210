import { workerData } from 'node:worker_threads';
import { loadApiCallColumns } from '../load/apiCallColumns.js';
import { excludedRows } from '../export/excludedRows.js';
import type { BackgroundReads, BackgroundReadTask, ReadReply, ReadWorkerData } from './readInBackground.js';
import { queriedLaunchingCalls } from '../load/projectionReads.js';
import type { LoadedExport } from '../load/loadedExport.js';
import type { ExcludedRows } from '../export/excludedRows.js';

/**
 * The read worker's side (readInBackground.ts): run by the NVTX worker's entry when its worker data
 * says so (`isReadWorkerData`).
 */

/**
 * The value of `task`. The launches: the projection's launched calls, only those that launched GPU
 * work (`queriedLaunchingCalls`, ops read first): the thread they are handed to holds them beside
 * the NVTX columns, and no call without GPU work is held here either (the whole fold, then
 * `keepCallsWithGpuWork`, held ~56 bytes for each of the 30x bench copy's 10.7M calls while the
 * NVTX columns were read).
 */
function read(task: BackgroundReadTask, loaded: LoadedExport, launchIds: boolean): BackgroundReads[BackgroundReadTask] {
  return task === 'launches' ? queriedLaunchingCalls(loaded) : loadApiCallColumns(loaded.handle, { launchIds });
}

/**
 * The rows left out, as the fold read calls first noted them: the API calls' note, then the GPU
 * ops' (the thread that takes them notes them in this order, after its own).
 */
function callsFirst(rows: ExcludedRows[]): ExcludedRows[] {
  const calls = rows.filter((r) => r.table === 'CUPTI_ACTIVITY_KIND_RUNTIME');
  return [...calls, ...rows.filter((r) => r.table !== 'CUPTI_ACTIVITY_KIND_RUNTIME')];
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
      reply = { value, excluded: readTask === 'launches' ? callsFirst(excludedRows(h)) : excludedRows(h) };
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
