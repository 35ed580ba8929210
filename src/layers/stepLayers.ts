import { GpuOpKind, type GpuOpColumns } from '../load/gpuOpColumns.js';
import type { ApiCallColumns } from '../load/apiCallColumns.js';
import type { IterationRow } from '../iterations/types.js';
import { moduleAt, type MarkerSegments } from './markerSegments.js';
import { moduleKindOfCategory } from './moduleRefs.js';
import { MIN_PERIOD, splitByPeriod, type PeriodSplit } from './period.js';
import { MODULE_KINDS, type LayerFigures, type LayerSource, type LayerSpan, type ModuleKind, type StepLayers } from './types.js';

/** What splitting every step reads, shared across steps. */
export interface SplitContext {
  ops: GpuOpColumns;
  api: ApiCallColumns;
  categories: string[];
  /** A kernel name id's category index. */
  categoryOf(nameId: number): number;
  /** The category of a whole-graph launch (graph-level trace), and of collectives. */
  graphCategory: number;
  communication: number;
  /** Per category index: the kind (index in MODULE_KINDS) its kernels get where no module names one. */
  moduleKindOfCategory: Uint8Array;
  markers: MarkerSegments | null;
  /** Inferred splits by kernel-name sequence: decode steps replaying one graph are inferred once. */
  periodMemo: Map<string, { names: Int32Array; split: PeriodSplit | null }[]>;
}

/** One step's kernels split by layer: each kernel's layer (-1 outside), category and kind (index in MODULE_KINDS), by the markers or the period. */
export interface StepAssignment {
  source: LayerSource;
  layer: Int32Array;
  category: Int32Array;
  kind: Uint8Array;
  split: PeriodSplit | null;
}

const KIND_INDEX = new Map(MODULE_KINDS.map((k, i) => [k, i]));
const kindIndex = (k: ModuleKind): number => KIND_INDEX.get(k)!;

/** The layers of one step's kernels (`opIdx`/`callIdx` in launch order): by markers when `useMarkers` and any kernel is in a layer's range. */
export function assignStep(ctx: SplitContext, opIdx: Int32Array, callIdx: Int32Array, useMarkers: boolean): StepAssignment {
  const n = opIdx.length;
  const layer = new Int32Array(n).fill(-1);
  const category = new Int32Array(n);
  const kind = new Uint8Array(n);
  const { ops, api, markers } = ctx;
  let marked = 0;
  for (let k = 0; k < n; k++) {
    const i = opIdx[k];
    const c = ops.kind[i] === GpuOpKind.Graph ? ctx.graphCategory : ctx.categoryOf(ops.nameId[i]);
    category[k] = c;
    const ci = callIdx[k];
    const m = useMarkers && markers ? moduleAt(markers, api.pid[ci], api.tid[ci], api.start[ci]) : -1;
    const ref = m >= 0 ? markers!.modules[m] : null;
    if (ref?.layer != null && ops.kind[i] === GpuOpKind.Kernel) {
      layer[k] = ref.layer;
      marked++;
    }
    // Collectives are communication wherever they run (o_proj's all-reduce is in self_attn).
    kind[k] = c === ctx.communication ? ctx.moduleKindOfCategory[c] : ref && ref.kind !== 'other' ? kindIndex(ref.kind) : ctx.moduleKindOfCategory[c];
  }
  if (marked > 0) {
    inferUnmarked(ctx, opIdx, layer);
    return { source: markers!.source, layer, category, kind, split: null };
  }
  const split = inferredSplit(ctx, opIdx);
  if (split) for (let k = 0; k < n; k++) layer[k] = ops.kind[opIdx[k]] === GpuOpKind.Kernel ? split.layerOf[k] : -1;
  return { source: 'period', layer, category, kind, split };
}

/**
 * A marked step's kernels outside every marked layer, split by their period where a stretch of
 * them repeats as many times as the markers have layers: a mixed step whose prefill ran eagerly
 * inside module markers and whose decode replayed a CUDA graph (no host marker during a replay).
 */
function inferUnmarked(ctx: SplitContext, opIdx: Int32Array, layer: Int32Array): void {
  const n = opIdx.length;
  const markedLayers = new Set<number>();
  for (let k = 0; k < n; k++) if (layer[k] >= 0) markedLayers.add(layer[k]);
  for (let a = 0; a < n; ) {
    if (layer[a] >= 0) {
      a++;
      continue;
    }
    let b = a;
    while (b < n && layer[b] < 0) b++;
    if (b - a >= MIN_PERIOD * 2) {
      const names = Int32Array.from(opIdx.subarray(a, b), (i) => (ctx.ops.kind[i] === GpuOpKind.Kernel ? ctx.ops.nameId[i] : -1));
      const split = splitByPeriod(names);
      if (split && split.layers === markedLayers.size) for (let k = a; k < b; k++) layer[k] = split.layerOf[k - a];
    }
    a = b;
  }
}

/** The period split of a step's kernel names, inferred once per distinct sequence. */
export function inferredSplit(ctx: SplitContext, opIdx: Int32Array): PeriodSplit | null {
  const names = new Int32Array(opIdx.length);
  let h = 0x811c9dc5;
  for (let k = 0; k < opIdx.length; k++) {
    const i = opIdx[k];
    names[k] = ctx.ops.kind[i] === GpuOpKind.Kernel ? ctx.ops.nameId[i] : -1;
    h = Math.imul(h ^ names[k], 0x01000193);
  }
  const key = `${names.length}:${h >>> 0}`;
  const seen = ctx.periodMemo.get(key) ?? [];
  for (const s of seen) if (sameNames(s.names, names)) return s.split;
  const split = splitByPeriod(names);
  seen.push({ names, split });
  ctx.periodMemo.set(key, seen);
  return split;
}

function sameNames(a: Int32Array, b: Int32Array): boolean {
  if (a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false;
  return true;
}

/** One layer's sums while a step is added up: by category and kind index. */
interface LayerSums {
  layer: number;
  ns: number;
  count: number;
  passes: number;
  byCategory: Float64Array;
  byKind: Float64Array;
}

/** The step's figures from its assignment: per layer, outside any layer, by kind and category. */
export function stepFigures(ctx: SplitContext, row: IterationRow, opIdx: Int32Array, a: StepAssignment): StepLayers {
  const { ops } = ctx;
  const nc = ctx.categories.length;
  const byLayer: (LayerSums | undefined)[] = [];
  const kindNs = new Float64Array(MODULE_KINDS.length);
  const outsideKindNs = new Float64Array(MODULE_KINDS.length);
  let kernelNs = 0;
  let outsideNs = 0;
  let outsideCount = 0;
  let prevLayer = -1;
  for (let k = 0; k < opIdx.length; k++) {
    const i = opIdx[k];
    const dur = ops.end[i] - ops.start[i];
    const kind = a.kind[k];
    kernelNs += dur;
    kindNs[kind] += dur;
    const l = a.layer[k];
    if (l < 0) {
      outsideNs += dur;
      outsideCount++;
      outsideKindNs[kind] += dur;
      // A kernel outside every layer ends a pass: the next layer-0 kernel starts another.
      prevLayer = -1;
      continue;
    }
    let f = byLayer[l];
    if (!f) byLayer[l] = f = { layer: l, ns: 0, count: 0, passes: 0, byCategory: new Float64Array(nc), byKind: new Float64Array(MODULE_KINDS.length) };
    if (l !== prevLayer) f.passes++;
    prevLayer = l;
    f.ns += dur;
    f.count++;
    f.byCategory[a.category[k]] += dur;
    f.byKind[kind] += dur;
  }
  const layers: LayerFigures[] = byLayer.flatMap((f) =>
    f ? [{ layer: f.layer, kernelNs: f.ns, kernelCount: f.count, share: kernelNs > 0 ? f.ns / kernelNs : 0, categoryNs: recordOf(ctx.categories, f.byCategory), kindNs: recordOf(MODULE_KINDS, f.byKind), passes: f.passes }] : [],
  );
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
    outsideKindNs: recordOf(MODULE_KINDS, outsideKindNs),
    memcpyNs: row.memcpyNs,
    memsetNs: row.memsetNs,
    kindNs: recordOf(MODULE_KINDS, kindNs),
    ...(fit ? { fit } : {}),
  };
}

/** The non-zero sums as a record keyed by `names`. */
function recordOf<K extends string>(names: readonly K[], sums: Float64Array): Partial<Record<K, number>> & Record<string, number> {
  const out: Record<string, number> = {};
  for (let j = 0; j < names.length; j++) if (sums[j] !== 0) out[names[j]] = sums[j];
  return out as Partial<Record<K, number>> & Record<string, number>;
}

/**
 * Where each layer of the step ran, per device: one span per pass of a layer (its kernels consecutive
 * in launch order on one device: first kernel start to last kernel end) and one per run of kernels
 * outside any layer (embedding before the first layer; final norm, LM head and sampling after the
 * last). A layer run k times in the step (a prefill of k requests one after the other) has k spans,
 * as `LayerFigures.passes` counts them; spans are in launch order and their ns add up to the step's figures.
 */
export function layerSpans(ctx: SplitContext, opIdx: Int32Array, a: StepAssignment): LayerSpan[] {
  const { ops } = ctx;
  const spans: LayerSpan[] = [];
  let byKind = new Float64Array(MODULE_KINDS.length);
  let cur: LayerSpan | null = null;
  const close = () => {
    if (cur) spans.push({ ...cur, kindNs: recordOf(MODULE_KINDS, byKind) });
  };
  for (let k = 0; k < opIdx.length; k++) {
    const i = opIdx[k];
    const layer = a.layer[k] >= 0 ? a.layer[k] : null;
    const dev = ops.deviceId[i];
    if (!cur || cur.layer !== layer || cur.deviceId !== dev) {
      close();
      cur = { deviceId: dev, layer, startNs: ops.start[i], endNs: ops.end[i], kernelNs: 0, kernelCount: 0, kindNs: {} };
      byKind = new Float64Array(MODULE_KINDS.length);
    }
    const dur = ops.end[i] - ops.start[i];
    cur.startNs = Math.min(cur.startNs, ops.start[i]);
    cur.endNs = Math.max(cur.endNs, ops.end[i]);
    cur.kernelNs += dur;
    cur.kernelCount++;
    byKind[a.kind[k]] += dur;
  }
  close();
  return spans;
}
