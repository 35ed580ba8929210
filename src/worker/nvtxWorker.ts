/**
 * The worker-thread side of `NvtxWorkerRead` (nvtxInBackground.ts). A worker entry calls
 * `runNvtxWorker` with what computes one part: it opens the export read-only on its own connection
 * and runs its steps in order, each ending with a reply on the port and then a raised flag (the
 * waiting thread blocks on the flag with `Atomics.wait`, so the flag is raised whatever happens,
 * error included):
 *
 * 0. the NVTX columns, over shared memory: the reply hands the same memory to the other thread, and
 *    this one keeps reading it (unless the plan reads none: then the parts query NVTX themselves);
 * 1. the API calls, over shared memory, when the plan asks (its NVTX parts only query);
 * 2.. the parts, in order; before the first that reads the GPU ops or API calls, it waits for the
 *    other thread to post them (shared memory too), and adopts them into its `LoadedExport`.
 */
import { workerData } from 'node:worker_threads';
import type { BackgroundReply, NvtxWorkerData, SharedLaunches } from './nvtxInBackground.js';
import { API_CALLS_STEP, COLUMNS_STEP, workerPartStep } from './nvtxInBackground.js';
import type { LoadedExport } from '../load/loadedExport.js';
import { isReadWorkerData } from './readInBackground.js';
import { runReadWorker } from './readWorker.js';

/**
 * Computes part `name` over the worker's export (`options`: the plan's, as given; `done`: the
 * values of the parts this worker computed before it, by name, read-only).
 */
export type BackgroundCompute = (loaded: LoadedExport, name: string, options: unknown, done: ReadonlyMap<string, unknown>) => unknown;

export async function runNvtxWorker(compute: BackgroundCompute): Promise<void> {
  // The same entry serves the read workers (readInBackground.ts).
  if (isReadWorkerData(workerData)) return runReadWorker();
  const { file, columns, apiCalls, flags, port, parts, options } = workerData as NvtxWorkerData;
  const state: { close?: () => void; excluded?: () => BackgroundReply['excluded'] } = {};

  /** Posts step `step`'s reply (or its error), then raises its flag, whatever happens. */
  const answer = (step: number, value: () => unknown): boolean => {
    let ok = false;
    try {
      const v = value();
      port.postMessage({ step, value: v, excluded: state.excluded?.() ?? [] } satisfies BackgroundReply);
      ok = true;
    } catch (err) {
      port.postMessage({ step, error: err instanceof Error ? err.message : String(err) } satisfies BackgroundReply);
    } finally {
      Atomics.store(flags, step, 1);
      Atomics.notify(flags, step);
    }
    return ok;
  };
  const finish = () => {
    state.close?.();
    port.close();
  };
  const done = new Map<string, unknown>();
  /** Part k's value, kept for the parts after it. */
  const computePart = (loaded: LoadedExport, k: number) => {
    const v = compute(loaded, parts[k].name, options, done);
    done.set(parts[k].name, v);
    return v;
  };
  /** Parts k.. in order (k: the first one not computed yet). */
  const runFrom = (loaded: LoadedExport, k: number) => {
    for (; k < parts.length; k++) answer(workerPartStep(k), () => computePart(loaded, k));
  };

  try {
    // Imported here, not at the top: a module that fails to load is then an error reply too.
    const { openExport } = await import('../export/openExport.js');
    const { LoadedExport } = await import('../load/loadedExport.js');
    const { excludedRows } = await import('../export/excludedRows.js');
    const h = openExport(file);
    const loaded = new LoadedExport(h, { shared: true });
    state.close = () => {
      loaded.close();
      h.close();
    };
    state.excluded = () => excludedRows(h);
    // The API calls first: the other thread wants them as soon as it has read the GPU ops.
    if (apiCalls && !answer(API_CALLS_STEP, () => loaded.apiCalls())) return finish();
    if (columns && !answer(COLUMNS_STEP, () => loaded.nvtx())) return finish();
    // The parts before the first that reads the launches, then (once posted) the rest.
    const firstWithLaunches = parts.findIndex((p) => p.usesLaunches);
    const upTo = firstWithLaunches < 0 ? parts.length : firstWithLaunches;
    for (let k = 0; k < upTo; k++) answer(workerPartStep(k), () => computePart(loaded, k));
    if (firstWithLaunches < 0) return finish();
    // The other thread posts its launches, or closes the port (it does the rest itself).
    port.once('message', (launches: SharedLaunches) => {
      loaded.adoptLaunches(launches);
      runFrom(loaded, firstWithLaunches);
      finish();
    });
    port.once('close', () => state.close?.());
  } catch (err) {
    // Every step fails (the other thread waits on the flag of the step it takes, whichever).
    for (let step = 0; step < workerPartStep(parts.length); step++) {
      answer(step, () => {
        throw err;
      });
    }
    finish();
  }
}
