/**
 * The NVTX worker thread's entry (see src/load/nvtxInBackground.ts): the loader reads the NVTX
 * columns there; this computes the parts the pipeline gave it from them.
 */
import { runNvtxWorker } from '../load/nvtxWorker.js';
import { summarizeKernels, type KernelSummaryOptions } from '../analysis/kernelSummary.js';
import { projectNvtxOntoGpu } from '../analysis/nvtxGpuProjection.js';
import { summarizeNvtxWithDomains } from '../analysis/nvtxSummary.js';
import { hostNvtxRanges } from '../gaps/hostNvtxRanges.js';

await runNvtxWorker((loaded, name, options) => {
  const opts = options as { kernels?: KernelSummaryOptions };
  if (name === 'nvtx') return summarizeNvtxWithDomains(loaded);
  if (name === 'hostRanges') return hostNvtxRanges(loaded);
  if (name === 'nvtxGpu') return projectNvtxOntoGpu(loaded);
  if (name === 'kernels') return summarizeKernels(loaded, opts.kernels ?? {});
  throw new Error(`no such background part: ${name}`);
});
