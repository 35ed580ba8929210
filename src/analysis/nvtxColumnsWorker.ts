/**
 * Worker-thread entry of `readNvtxColumnsInBackground` (nvtxColumnsInBackground.ts). It opens the
 * export read-only on its own connection and runs its steps in order, each ending with a reply on
 * the port and then a raised flag (the waiting thread blocks on the flag with `Atomics.wait`, so
 * the flag is raised whatever happens, error included):
 *
 * 0. `columns`: the NVTX columns, over shared memory: the reply hands the same memory to the other
 *    thread, and this one keeps reading it;
 * 1. `summary` (asked for with `summarize`): the NVTX summary with the ranges per domain;
 * 2. `projection` (with `project`): waits for the GPU ops and API calls the other thread read
 *    (shared memory too) and projects the NVTX ranges onto the GPU from them;
 * 3. `kernels` (with `kernels`, the summary's options): the kernel summary from those GPU ops.
 */
import { workerData, type MessagePort } from 'node:worker_threads';
import type { KernelSummaryOptions } from './kernelSummary.js';
import type { SharedLaunches } from './nvtxGpuProjection.js';
import { BackgroundStep, type BackgroundReply } from './nvtxColumnsInBackground.js';
import type { ExportHandle } from '../../queries/handle.js';

interface NvtxWorkerData {
  file: string;
  /** One per `BackgroundStep`: its reply is posted. */
  flags: Int32Array;
  port: MessagePort;
  summarize: boolean;
  project: boolean;
  kernels: KernelSummaryOptions | null;
}

const { file, flags, port, summarize, project, kernels } = workerData as NvtxWorkerData;

let handle: ExportHandle | undefined;
/** The rows this thread's connection left out so far, for the other thread to note for its export (the notes are said there). */
let excludedSoFar: (h: ExportHandle) => BackgroundReply['excluded'] = () => [];

/** Posts step `step`'s reply (or its error), then raises its flag, whatever happens. */
function answer(step: BackgroundStep, value: () => unknown): boolean {
  let ok = false;
  try {
    const v = value();
    port.postMessage({ step, value: v, excluded: handle ? excludedSoFar(handle) : [] } satisfies BackgroundReply);
    ok = true;
  } catch (err) {
    port.postMessage({ step, error: err instanceof Error ? err.message : String(err) } satisfies BackgroundReply);
  } finally {
    Atomics.store(flags, step, 1);
    Atomics.notify(flags, step);
  }
  return ok;
}

const finish = () => {
  handle?.close();
  port.close();
};
try {
  // Imported here, not at the top: a module that fails to load is then an error reply too.
  const { openExport } = await import('../export/openExport.js');
  const { nvtxColumnsOf } = await import('./nvtxColumns.js');
  const { summarizeNvtxWithDomains } = await import('./nvtxSummary.js');
  const { projectNvtxOntoGpu } = await import('./nvtxGpuProjection.js');
  const { summarizeKernels } = await import('./kernelSummary.js');
  excludedSoFar = (await import('../export/rowChecks.js')).excludedRows;
  const h = openExport(file);
  handle = h;
  const loaded = answer(BackgroundStep.Columns, () => nvtxColumnsOf(h, { shared: true }));
  if (loaded && summarize) answer(BackgroundStep.Summary, () => summarizeNvtxWithDomains(h));
  if (loaded && (project || kernels)) {
    // The other thread posts its launches, or closes the port (it does the rest itself).
    port.once('message', (launches: SharedLaunches) => {
      if (project) answer(BackgroundStep.Projection, () => projectNvtxOntoGpu(h, { launches }));
      if (kernels) answer(BackgroundStep.Kernels, () => summarizeKernels(h, kernels, { gpuOps: launches.gpuOps }));
      finish();
    });
    port.once('close', () => h.close());
  } else finish();
} catch (err) {
  answer(BackgroundStep.Columns, () => {
    throw err;
  });
  finish();
}
