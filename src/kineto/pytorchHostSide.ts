import type { ExportHandle } from '../../queries/handle.js';
import type { GpuOpColumns } from '../analysis/gpuOpColumns.js';
import type { IterationAnalysis } from '../iterations/analyze.js';
import type { PytorchHostSide } from '../pipeline/types.js';
import { analyzeAtenOps } from './atenOps.js';
import { attachTorchTrace } from './attachTorchTrace.js';

/** Whether the analysis has a PyTorch profiler host side: the input is a Kineto trace, or one was given beside the export. */
export function hasPytorchHostSide(handle: ExportHandle, torchTrace: string | undefined): boolean {
  return !!torchTrace || handle.hasTable('KINETO_CPU_OPS');
}

/** Aten ops per iteration and phase: from the input itself (a Kineto trace) or from `torchTrace` beside an export. */
export function pytorchHostSide(handle: ExportHandle, it: IterationAnalysis, torchTrace: string | undefined, gpuOps: GpuOpColumns): PytorchHostSide {
  const phaseOf = new Map(it.iterations.map((r) => [r.iter, r.phase]));
  const groupOf = (iter: number) => phaseOf.get(iter) ?? null;
  const r = torchTrace ? attachTorchTrace(handle, torchTrace, it.iterations, { gpuOps, groupOf }) : analyzeAtenOps(handle, it.iterations, { gpuOps, groupOf });
  return { iterations: r.iterations, byPhase: r.groups, totals: r.totals, notes: r.notes };
}
