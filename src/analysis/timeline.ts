import { GpuOpKind, type GpuOpColumns, type GpuOpSliceColumns } from '../load/gpuOpColumns.js';
import { sessionStartEpochNs } from '../load/infoReads.js';
import { cpuOps, type CpuOpColumns } from '../load/kinetoReads.js';
import type { LoadedExport } from '../load/loadedExport.js';
import { enumLabels } from '../load/memoryReads.js';
import { NO_STRING_ID } from '../columns/typedColumn.js';

/** Kernel slice names: nsys's short name (`shortName`, the default) or the full demangled signature. */
export type KernelNames = 'short' | 'demangled';

/** GPU-op columns read with their trace slice columns (`loadGpuOpColumns` with `slices`). */
export type GpuOpColumnsWithSlices = GpuOpColumns & { slices: GpuOpSliceColumns };

/**
 * Every op of the export with what a trace slice of it shows: the `timeline` part of the
 * analysis, what `iterscope trace` writes. The GPU ops are the columns the iterations and gaps
 * were computed from (read once), kept instead of being let go; `forEachInStartOrder` visits them
 * in start order (ties in read order) by merging the tables' ascending runs.
 */
export interface Timeline {
  /** The kernel slice names asked for (without a `shortName` column the slices are demangled names). */
  kernelNames: KernelNames;
  /** Every GPU op (kernels, memcpys, memsets, whole-graph launches) with its slice columns. */
  gpuOps: GpuOpColumnsWithSlices;
  /** Kernel names by string id: the slice name column's and the demangled names (for categories). */
  kernelStrings: Map<number, string>;
  /** `ENUM_CUDA_MEMCPY_OPER` labels by `copyKind` (`Host-to-Device`, ...). */
  copyKinds: ReadonlyMap<number, string>;
  /** Distinct processes that ran GPU work (more than one: each slice names its pid). */
  gpuProcesses: number;
  /** A PyTorch profiler trace's aten ops (`KINETO_CPU_OPS`), per thread in time order; null without. */
  atenOps: CpuOpColumns | null;
  /** `TARGET_INFO_SESSION_START_TIME.utcEpochNs` as decimal text (beyond 2^53); null when absent or unreadable. */
  sessionStartUtcEpochNs: string | null;
}

/** The timeline of an export, from its GPU-op columns (read with `slices`). */
export function buildTimeline(loaded: LoadedExport, kernelNames: KernelNames = 'short'): Timeline {
  const gpuOps = loaded.gpuOps();
  if (!gpuOps.slices) throw new Error(`${loaded.path}: the GPU ops were read without their trace slice columns`);
  const ops = gpuOps as GpuOpColumnsWithSlices;
  return {
    kernelNames,
    gpuOps: ops,
    kernelStrings: loaded.strings(kernelStringIds(ops)),
    copyKinds: enumLabels(loaded, 'ENUM_CUDA_MEMCPY_OPER'),
    gpuProcesses: countGpuProcesses(ops),
    atenOps: loaded.hasTable('KINETO_CPU_OPS') ? cpuOps(loaded) : null,
    sessionStartUtcEpochNs: sessionStartText(loaded),
  };
}

/** The string ids the kernel slices name: each kernel's slice name id and its demangled name id. */
function kernelStringIds(ops: GpuOpColumnsWithSlices): Set<number> {
  const ids = new Set<number>();
  const sliceName = ops.slices.nameId;
  for (let i = 0; i < ops.count; i++) {
    if (ops.kind[i] !== GpuOpKind.Kernel) continue;
    if (ops.nameId[i] !== NO_STRING_ID) ids.add(ops.nameId[i]);
    if (sliceName[i] >= 0) ids.add(sliceName[i]);
  }
  // Ids that did not fit the Int32 column are numbers all the same.
  for (const [i, odd] of ops.slices.verbatim) {
    if (ops.kind[i] === GpuOpKind.Kernel && typeof odd.nameId === 'number') ids.add(odd.nameId);
  }
  return ids;
}

/** Distinct pids over the ops; a NULL or text pid (kept verbatim) counts as a process of its own. */
function countGpuProcesses(ops: GpuOpColumnsWithSlices): number {
  const pids = new Set<unknown>();
  const verbatim = ops.slices.verbatim;
  // Ops come in runs of one process: a Set insert per change of pid, not per op.
  let last = NaN;
  for (let i = 0; i < ops.count; i++) {
    const odd = verbatim.size > 0 ? verbatim.get(i) : undefined;
    if (odd && 'pid' in odd) pids.add(`verbatim:${String(odd.pid)}`);
    else if (ops.pid[i] !== last) pids.add((last = ops.pid[i]));
  }
  return pids.size;
}

function sessionStartText(loaded: LoadedExport): string | null {
  try {
    const ns = sessionStartEpochNs(loaded);
    return ns == null ? null : String(ns);
  } catch {
    // A damaged session-start table leaves the trace's header without it, nothing else.
    return null;
  }
}
