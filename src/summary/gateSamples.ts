import { servingEngineOf, type ServingEngine } from './engineCapture.js';
import { sketchOf, type Sketch } from '../math/sketch.js';
import type { CategoryInstances, SpanSamples } from '../analysis/servingSpan.js';
import { PHASES, type Phase } from '../iterations/phase.js';
import type { IterationRow } from '../iterations/types.js';
import { traceNames } from '../load/captureSettings.js';
import type { ExportAnalysis } from '../pipeline/exportAnalysis.js';
import { layerGateOf, type LayerGate } from './layerGate.js';

/**
 * What a summary's numbers can be compared on: per-iteration samples by phase (iteration markers),
 * or the serving span's kernel instances (no markers).
 */
export type GateBasis = 'iterations' | 'kernel instances';

/** What makes two captures' numbers (in)comparable, checked by `compare` before any delta. */
export interface CaptureFacts {
  /** GPU names of the active devices (null: not in the export). */
  gpus: (string | null)[];
  engine: ServingEngine;
  /** Kernels with graph nodes (`node`), whole-graph rows (`graph`), or neither. */
  graphTrace: string;
  /** What nsys traced (`-t`), as spelled on its command line. */
  traced: string[];
  captureNs: number | null;
  /** GPU ops without their CUDA API row: the export was time-trimmed (or the window cut a launch). */
  opsWithoutLaunch: number;
  /** Iterations per phase, and mean requests per iteration per phase (null without counts). */
  phaseMix: Partial<Record<Phase, number>>;
  batch: Partial<Record<Phase, number | null>>;
  /** Why the capture has no iterations (no markers, markers without numbers, ...); null with iterations. */
  noIterations: string | null;
}

/** One kernel name of the span: figures and its instance durations. */
export interface KernelGate {
  name: string;
  category: string;
  instances: number;
  totalNs: number;
  meanNs: number;
  medianNs: number;
  perSecond: number;
  durations: Sketch;
}

/** The serving span's figures and samples (the `kernel instances` basis). */
export interface SpanGate {
  boundary: string;
  spanNs: number;
  processes: number;
  kernelNs: number;
  kernels: number;
  graphLaunches: number;
  busyShare: number;
  categoryNs: Record<string, number>;
  /** Generated tokens of the span and where the count came from; null when unknown. */
  generatedTokens: number | null;
  tokenSource: string;
  /** Per category: kernel instances, their total time, and the within-name squared deviations (src/analysis/spanSamples.ts). */
  categories: Record<string, CategoryInstances>;
  kernelNames: KernelGate[];
}

export interface GateSamples {
  basis: GateBasis;
  /** Per phase, per metric: one sample per iteration. Null without iterations. */
  iterations: Partial<Record<Phase, Record<string, Sketch>>> | null;
  span: SpanGate | null;
  /** Per phase, the layer split's samples (kernel ns per step by layer, module kind, outside layers): only when the layers were asked for (`--layers`). */
  layers?: LayerGate;
}

/** The per-iteration metrics sketched by phase (the gated ones and their companions). */
export function iterationSketches(rows: readonly IterationRow[], categories: readonly string[]): Partial<Record<Phase, Record<string, Sketch>>> {
  const out: Partial<Record<Phase, Record<string, Sketch>>> = {};
  for (const p of PHASES) {
    const rs = rows.filter((r) => r.phase === p);
    if (!rs.length) continue;
    const m: Record<string, Sketch> = {
      'GPU busy per iteration': sketchOf(rs.map((r) => r.gpuBusyNs)),
      'idle share': sketchOf(rs.map((r) => (r.wallNs > 0 ? r.gpuIdleNs / r.wallNs : 0)), 6),
      'wall per iteration': sketchOf(rs.map((r) => r.wallNs)),
      'kernel time per iteration': sketchOf(rs.map((r) => r.kernelNs)),
      'kernels per iteration': sketchOf(rs.map((r) => r.kernelCount)),
    };
    for (const c of categories) if (rs.some((r) => r.categoryNs[c])) m[`${c} per iteration`] = sketchOf(rs.map((r) => r.categoryNs[c] ?? 0));
    out[p] = m;
  }
  return out;
}

/** The span's figures, each category's and the top kernel names' instance durations. */
function spanGate(a: ExportAnalysis, tokens: { count: number; source: string } | null): SpanGate | null {
  const span = a.servingSpan;
  const s: SpanSamples | undefined = span?.samples;
  if (!span || !s) return null;
  // Rounded: a baseline keeps no float noise.
  const categories: SpanGate['categories'] = {};
  for (const [c, x] of Object.entries(s.categories)) categories[c] = { instances: x.instances, totalNs: Math.round(x.totalNs), withinNameSqNs: Math.round(x.withinNameSqNs) };
  const generated = tokens ?? (span.generatedTokens != null ? { count: span.generatedTokens, source: span.stepCounts?.fromLog ? 'log' : 'markers' } : null);
  return {
    boundary: span.boundary,
    spanNs: span.spanNs,
    processes: span.processes.length,
    kernelNs: span.kernelNs,
    kernels: span.kernels,
    graphLaunches: span.graphLaunches,
    busyShare: span.busyShare,
    categoryNs: span.categoryNs,
    generatedTokens: generated?.count ?? null,
    tokenSource: generated?.source ?? 'none',
    categories,
    kernelNames: s.kernelInstances.map((k) => {
      const durations = sketchOf(k.durations);
      const total = k.durations.reduce((x, y) => x + y, 0);
      const sorted = Float64Array.from(k.durations).sort();
      const mid = sorted.length >> 1;
      const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
      return { name: k.name, category: k.category, instances: k.durations.length, totalNs: total, meanNs: total / k.durations.length, medianNs: median, perSecond: (k.durations.length * 1e9) / span.spanNs, durations };
    }),
  };
}

export function gateSamplesOf(a: ExportAnalysis, tokens: { count: number; source: string } | null): GateSamples {
  const rows = a.iterations?.iterations ?? [];
  return {
    basis: rows.length ? 'iterations' : 'kernel instances',
    iterations: rows.length ? iterationSketches(rows, a.iterations!.categories) : null,
    span: spanGate(a, tokens),
    ...(a.layers ? { layers: layerGateOf(a.layers) } : {}),
  };
}

export function captureFactsOf(a: ExportAnalysis): CaptureFacts {
  const info = a.info!;
  const rows = a.iterations?.iterations ?? [];
  const active = new Set(info.activeDevices);
  const gpus = info.gpus.filter((g) => !active.size || active.has(g.id)).map((g) => g.name);
  const phaseMix: CaptureFacts['phaseMix'] = {};
  const batch: CaptureFacts['batch'] = {};
  for (const p of PHASES) {
    const rs = rows.filter((r) => r.phase === p);
    if (!rs.length) continue;
    phaseMix[p] = rs.length;
    const known = rs.every((r) => r.contextRequests != null || r.generationRequests != null);
    batch[p] = known ? rs.reduce((x, r) => x + (r.contextRequests ?? 0) + (r.generationRequests ?? 0), 0) / rs.length : null;
  }
  return {
    gpus: gpus.length ? gpus : info.activeDevices.map(() => null),
    engine: servingEngineOf(info, a.iterations, a.capture.command, a.servingSpan?.processes.map((p) => p.pid) ?? []).engine,
    graphTrace: info.graphTraceMode,
    traced: traceNames(a.capture.tracing),
    captureNs: info.durationNs,
    opsWithoutLaunch: a.servingSpan?.leftOut.noLaunchOps ?? 0,
    phaseMix,
    batch,
    noIterations: rows.length ? null : (a.iterationError ?? 'no iteration found'),
  };
}
