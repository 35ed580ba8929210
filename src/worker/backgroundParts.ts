/**
 * What the NVTX worker computes of each part the pipeline may give it (`PartEntry.background`):
 * the same function the part calls on the calling thread, from the worker's own `LoadedExport`
 * (its NVTX columns, and the launches once posted). Kept apart from the registry (parts.ts) so the
 * worker's entry loads only these analyses.
 */
import type { LoadedExport } from '../load/loadedExport.js';
import { summarizeKernels, type KernelSummaryOptions } from '../analysis/kernelSummary.js';
import { projectNvtxOntoGpu } from '../analysis/nvtxGpuProjection.js';
import { summarizeNvtxWithDomains, type NvtxSummaryWithDomains } from '../analysis/nvtxSummary.js';
import { describeExport } from '../analysis/exportInfo.js';
import { launchPhases } from '../analysis/captureHealth.js';
import { hostCauseRows, hostNvtxRanges } from '../gaps/hostNvtxRanges.js';
import { findIterationRangesData } from '../iterations/sources/index.js';
import type { IterationRangeSpec } from '../iterations/rangeSpec.js';

/** The plain options the worker's parts read (`BackgroundPlan.options`). */
export interface BackgroundOptions {
  kernels?: KernelSummaryOptions;
  /** The user's `--iteration-range`. */
  rangeSpec?: IterationRangeSpec;
}

/**
 * By part: what the worker computes. For `iterationWindows`, the NVTX read of the part (the
 * iteration ranges, as plain data; the calling thread builds the windows from them, or finds them
 * itself when the worker found none).
 */
export const BACKGROUND_PARTS: Readonly<Record<string, (loaded: LoadedExport, options: BackgroundOptions, done: ReadonlyMap<string, unknown>) => unknown>> = {
  nvtx: (loaded) => summarizeNvtxWithDomains(loaded),
  iterationWindows: (loaded, opts) => findIterationRangesData(loaded, opts.rangeSpec),
  hostRanges: (loaded) => hostNvtxRanges(loaded),
  hostCauseRows: (loaded) => hostCauseRows(loaded),
  nvtxGpu: (loaded) => projectNvtxOntoGpu(loaded),
  kernels: (loaded, opts) => summarizeKernels(loaded, opts.kernels ?? {}),
  // As the `info` part: the ranges per domain from the NVTX summary when this worker made it.
  info: (loaded, _opts, done) => describeExport(loaded, { nvtxRangesByDomain: (done.get('nvtx') as NvtxSummaryWithDomains | undefined)?.rangesByDomain }),
  healthLaunches: (loaded) => launchPhases(loaded),
};

/** Part `name`'s value in the worker (`done`: the parts it computed before); throws for a part it does not compute (the caller then computes it). */
export function computeInBackground(loaded: LoadedExport, name: string, options: unknown, done: ReadonlyMap<string, unknown> = new Map()): unknown {
  const compute = Object.hasOwn(BACKGROUND_PARTS, name) ? BACKGROUND_PARTS[name] : undefined;
  if (!compute) throw new Error(`no such background part: ${name}`);
  return compute(loaded, (options ?? {}) as BackgroundOptions, done);
}
