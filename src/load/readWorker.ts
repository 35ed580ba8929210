import { workerData } from 'node:worker_threads';
import { loadApiCallColumns } from './apiCallColumns.js';
import { excludedRows } from './excludedRows.js';
import { launchedCallBuffers } from './launchedCalls.js';
import type { BackgroundReadTask, ReadReply, ReadWorkerData } from './readInBackground.js';
import { queriedLaunchedCalls } from './projectionReads.js';
import type { LoadedExport } from './loadedExport.js';

/**
 * The read worker's side (readInBackground.ts): run by the NVTX worker's entry when its worker data
 * says so (`isReadWorkerData`).
 */

/** The value of `task` and the buffers that cross back by transfer. */
function read(task: BackgroundReadTask, loaded: LoadedExport): { value: unknown; transfer: ArrayBuffer[] } {
  if (task === 'launches') {
    const value = queriedLaunchedCalls(loaded);
    return { value, transfer: launchedCallBuffers(value) };
  }
  const value = loadApiCallColumns(loaded.handle);
  const arrays = [value.pid, value.tid, value.correlationId, value.start, value.end, value.nameId];
  return { value, transfer: [...new Set(arrays.map((a) => a.buffer as ArrayBuffer))] };
}

/** Open the export, read, post the value by transfer, raise the flag (whatever happens). */
export async function runReadWorker(): Promise<void> {
  const { readTask, file, flag, port } = workerData as ReadWorkerData;
  let reply: ReadReply = { excluded: [] };
  let transfer: ArrayBuffer[] = [];
  try {
    // Imported here, not at the top (as the NVTX worker does): a module that fails to load is then an error reply too.
    const { openExport } = await import('../export/openExport.js');
    const { LoadedExport } = await import('./loadedExport.js');
    const h = openExport(file);
    try {
      const loaded = new LoadedExport(h);
      const out = read(readTask, loaded);
      reply = { value: out.value, excluded: excludedRows(h) };
      transfer = out.transfer;
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
