import type { LoadedExport } from '../load/loadedExport.js';
import type { IterationAnalysis } from '../iterations/types.js';
import { analyzeAtenOps } from './atenOps.js';
import { attachTorchTrace } from './attachTorchTrace.js';
import type { GroupHostSide, HostSideTotals, IterationHostSide } from './hostSide.js';

/** The "Host side (PyTorch profiler)" data: aten ops per iteration and per phase. */
export interface PytorchHostSide {
  iterations: IterationHostSide[];
  byPhase: GroupHostSide[];
  totals: HostSideTotals;
  /** Clock alignment, launch attribution, what could not be matched. */
  notes: string[];
}

/** Whether the analysis has a PyTorch profiler host side: the input is a Kineto trace, or one was given beside the export. */
export function hasPytorchHostSide(loaded: LoadedExport, torchTrace: string | undefined): boolean {
  return !!torchTrace || loaded.hasTable('KINETO_CPU_OPS');
}

/** Aten ops per iteration and phase: from the input itself (a Kineto trace) or from `torchTrace` beside an export. */
export function pytorchHostSide(loaded: LoadedExport, it: IterationAnalysis, torchTrace: string | undefined): PytorchHostSide {
  const phaseOf = new Map(it.iterations.map((r) => [r.iter, r.phase]));
  const groupOf = (iter: number) => phaseOf.get(iter) ?? null;
  const r = torchTrace ? attachTorchTrace(loaded, torchTrace, it.iterations, { groupOf }) : analyzeAtenOps(loaded, it.iterations, { groupOf });
  return { iterations: r.iterations, byPhase: r.groups, totals: r.totals, notes: r.notes };
}
