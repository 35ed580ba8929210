import { GpuOpKind, type GpuOpColumns } from '../load/gpuOpColumns.js';
import { cpuOps, launchCalls } from '../load/kinetoReads.js';
import type { LoadedExport } from '../load/loadedExport.js';
import { hostSideByIteration, type GroupHostSide, type HostSideTotals, type HostWindow, type IterationHostSide } from './hostSide.js';

export interface AtenOpAnalysis {
  file: string;
  iterations: IterationHostSide[];
  totals: HostSideTotals;
  /** Per `groupOf` group (e.g. batch phase), when asked. */
  groups: GroupHostSide[];
  /** Aten ops in the trace (0: not a converted Kineto trace, or one without `cpu_op` events). */
  cpuOps: number;
  notes: string[];
}

/** The kernels of a GPU-op load, as `hostSideByIteration` takes them. */
export function kernelsOf(ops: GpuOpColumns) {
  const keep: number[] = [];
  for (let i = 0; i < ops.count; i++) if (ops.kind[i] === GpuOpKind.Kernel) keep.push(i);
  const pick = <T extends Float64Array | Int32Array>(a: ArrayLike<number>, make: (n: number) => T): T => {
    const out = make(keep.length);
    keep.forEach((i, k) => (out[k] = a[i]));
    return out;
  };
  return {
    count: keep.length,
    correlationId: pick(ops.correlationId, (n) => new Float64Array(n)),
    pid: pick(ops.pid, (n) => new Int32Array(n)),
    start: pick(ops.start, (n) => new Float64Array(n)),
    end: pick(ops.end, (n) => new Float64Array(n)),
  };
}

/**
 * The host side of each iteration from a PyTorch profiler trace on its own (opened with
 * `openInput`): CPU time by aten op (self time), the top ops, launch calls and the share made
 * inside an aten op, GPU time by launching op, and the time from the iteration's first op to its
 * first kernel. `iterations` are `analyzeIterations` rows (or any numbered windows).
 */
export function analyzeAtenOps(loaded: LoadedExport, iterations: readonly HostWindow[], opts: { topN?: number; groupOf?: (iter: number) => string | null } = {}): AtenOpAnalysis {
  const ops = cpuOps(loaded);
  const notes: string[] = [];
  if (!loaded.hasTable('KINETO_CPU_OPS')) notes.push('not a PyTorch profiler trace: no aten ops (pass the trace itself, or use --torch-trace beside an nsys export)');
  else if (ops.count === 0) notes.push('the PyTorch profiler trace has no aten ops (cpu_op events)');
  const { iterations: rows, totals, groups } = hostSideByIteration(ops, launchCalls(loaded), kernelsOf(loaded.gpuOps()), iterations, { topN: opts.topN, groupOf: opts.groupOf });
  if (totals.attributedShare !== null) {
    notes.push(`${totals.attributedLaunchCalls} of ${totals.launchCalls} kernel-launch calls in iterations (${(totals.attributedShare * 100).toFixed(1)}%) were made inside an aten op; graph launches: ${totals.attributedGraphLaunches} of ${totals.graphLaunches}`);
  }
  return { file: loaded.path, iterations: rows, totals, groups, cpuOps: ops.count, notes };
}
