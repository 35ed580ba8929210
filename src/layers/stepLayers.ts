import { GpuOpKind, type GpuOpColumns } from '../load/gpuOpColumns.js';
import type { ApiCallColumns } from '../load/apiCallColumns.js';
import type { IterationRow } from '../iterations/analyzeIterations.js';
import { moduleAt, type MarkerSegments } from './markerSegments.js';
import { kindOfCategory } from './moduleRefs.js';
import { splitByPeriod, type PeriodSplit } from './period.js';
import type { LayerFigures, LayerSource, ModuleKind, StepLayers } from './types.js';

/** What splitting every step reads, shared across steps. */
export interface SplitContext {
  ops: GpuOpColumns;
  api: ApiCallColumns;
  categories: string[];
  /** A kernel name id's category index. */
  categoryOf(nameId: number): number;
  markers: MarkerSegments | null;
  /** Inferred splits by kernel-name sequence: decode steps replaying one graph are inferred once. */
  periodMemo: Map<string, { names: Int32Array; split: PeriodSplit | null }[]>;
}

/** One step's kernels split by layer: each kernel's layer (-1 outside) and kind, by the markers or the period. */
export interface StepAssignment {
  source: LayerSource;
  layer: Int32Array;
  kind: ModuleKind[];
  split: PeriodSplit | null;
}

/** The layers of one step's kernels (`opIdx`/`callIdx` in launch order): by markers when `useMarkers` and any kernel is in a layer's range. */
export function assignStep(ctx: SplitContext, opIdx: Int32Array, callIdx: Int32Array, useMarkers: boolean): StepAssignment {
  const n = opIdx.length;
  const layer = new Int32Array(n).fill(-1);
  const kind: ModuleKind[] = new Array(n);
  const { ops, api, markers } = ctx;
  let marked = 0;
  for (let k = 0; k < n; k++) {
    const i = opIdx[k];
    const category = ctx.categories[ctx.categoryOf(ops.nameId[i])] ?? 'other';
    const ci = callIdx[k];
    const m = useMarkers && markers ? moduleAt(markers, api.pid[ci], api.tid[ci], api.start[ci]) : -1;
    const ref = m >= 0 ? markers!.modules[m] : null;
    if (ref?.layer != null && ops.kind[i] === GpuOpKind.Kernel) {
      layer[k] = ref.layer;
      marked++;
    }
    // Collectives are communication wherever they run (o_proj's all-reduce is in self_attn).
    kind[k] = category === 'communication' ? 'communication' : ref && ref.kind !== 'other' ? ref.kind : kindOfCategory(category);
  }
  if (marked > 0) return { source: 'layerwise-nvtx', layer, kind, split: null };
  const split = inferredSplit(ctx, opIdx);
  if (split) for (let k = 0; k < n; k++) layer[k] = ops.kind[opIdx[k]] === GpuOpKind.Kernel ? split.layerOf[k] : -1;
  return { source: 'period', layer, kind, split };
}

/** The period split of a step's kernel names, inferred once per distinct sequence. */
export function inferredSplit(ctx: SplitContext, opIdx: Int32Array): PeriodSplit | null {
  const names = Int32Array.from(opIdx, (i) => (ctx.ops.kind[i] === GpuOpKind.Kernel ? ctx.ops.nameId[i] : -1));
  const key = `${names.length}:${hashOf(names)}`;
  const seen = ctx.periodMemo.get(key) ?? [];
  for (const s of seen) if (sameNames(s.names, names)) return s.split;
  const split = splitByPeriod(names);
  seen.push({ names, split });
  ctx.periodMemo.set(key, seen);
  return split;
}

function hashOf(a: Int32Array): number {
  let h = 0x811c9dc5;
  for (let k = 0; k < a.length; k++) h = Math.imul(h ^ a[k], 0x01000193);
  return h >>> 0;
}

function sameNames(a: Int32Array, b: Int32Array): boolean {
  if (a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false;
  return true;
}

/** The step's figures from its assignment: per layer, outside any layer, by kind and category. */
export function stepFigures(ctx: SplitContext, row: IterationRow, opIdx: Int32Array, a: StepAssignment): StepLayers {
  const { ops } = ctx;
  const byLayer = new Map<number, LayerFigures>();
  const kindNs: Partial<Record<ModuleKind, number>> = {};
  const outsideKindNs: Partial<Record<ModuleKind, number>> = {};
  let kernelNs = 0;
  let outsideNs = 0;
  let outsideCount = 0;
  let prevLayer = -1;
  for (let k = 0; k < opIdx.length; k++) {
    const i = opIdx[k];
    const dur = ops.end[i] - ops.start[i];
    const kind = a.kind[k];
    kernelNs += dur;
    kindNs[kind] = (kindNs[kind] ?? 0) + dur;
    const l = a.layer[k];
    if (l < 0) {
      outsideNs += dur;
      outsideCount++;
      outsideKindNs[kind] = (outsideKindNs[kind] ?? 0) + dur;
      // A kernel outside every layer ends a pass: the next layer-0 kernel starts another.
      prevLayer = -1;
      continue;
    }
    let f = byLayer.get(l);
    if (!f) byLayer.set(l, (f = { layer: l, kernelNs: 0, kernelCount: 0, share: 0, categoryNs: {}, kindNs: {}, passes: 0 }));
    if (l !== prevLayer) f.passes++;
    prevLayer = l;
    f.kernelNs += dur;
    f.kernelCount++;
    const cat = ctx.categories[ctx.categoryOf(ops.nameId[i])] ?? 'other';
    const category = ops.kind[i] === GpuOpKind.Graph ? 'cuda_graph' : cat;
    f.categoryNs[category] = (f.categoryNs[category] ?? 0) + dur;
    f.kindNs[kind] = (f.kindNs[kind] ?? 0) + dur;
  }
  const layers = [...byLayer.values()].sort((x, y) => x.layer - y.layer);
  for (const f of layers) f.share = kernelNs > 0 ? f.kernelNs / kernelNs : 0;
  const fit = a.split ? { period: a.split.period, layers: a.split.layers, runs: a.split.runs, fitShare: a.split.fitShare } : undefined;
  return {
    iter: row.iter,
    pid: row.pid,
    phase: row.phase,
    source: a.source,
    kvTokens: row.kvTokens ?? null,
    kernelNs,
    kernelCount: opIdx.length,
    layers,
    outsideNs,
    outsideCount,
    outsideKindNs,
    memcpyNs: row.memcpyNs,
    memsetNs: row.memsetNs,
    kindNs,
    ...(fit ? { fit } : {}),
  };
}
