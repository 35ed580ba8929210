import { workerData } from 'node:worker_threads';
import { excludedRows } from './excludedRows.js';
import { launchedCallBuffers } from './launchedCalls.js';
import type { LaunchesReply, LaunchesWorkerData } from './launchesInBackground.js';
import { queriedLaunchedCalls } from './projectionReads.js';

/**
 * The launches worker's side (launchesInBackground.ts): run by the NVTX worker's entry when its
 * worker data says so (`isLaunchesWorkerData`).
 */
/** The worker side: open the export, fold, post the arrays by transfer, raise the flag (whatever happens). */
export async function runLaunchesWorker(): Promise<void> {
  const { file, flag, port } = workerData as LaunchesWorkerData;
  let reply: LaunchesReply = { excluded: [] };
  let transfer: ArrayBuffer[] = [];
  try {
    // Imported here, not at the top (as the NVTX worker does): a module that fails to load is then an error reply too.
    const { openExport } = await import('../export/openExport.js');
    const { LoadedExport } = await import('./loadedExport.js');
    const h = openExport(file);
    try {
      const loaded = new LoadedExport(h);
      const value = queriedLaunchedCalls(loaded);
      reply = { value, excluded: excludedRows(h) };
      transfer = launchedCallBuffers(value);
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
