import type { CategoryClassifier } from '../categories/rules.js';
import type { IterationAnalysis } from '../iterations/types.js';
import type { LoadedExport } from '../load/loadedExport.js';
import { readModuleMarkerRanges } from '../load/moduleMarkerReads.js';
import { StringIdTable } from '../columns/typedColumn.js';
import { markerSegments, type MarkerSegments } from './markerSegments.js';
import { assignStep, inferredSplit, layerSpans, stepFigures, type SplitContext } from './stepLayers.js';
import { kernelsByStep, type LaunchWindow } from './stepKernels.js';
import { summarizePhases } from './summary.js';
import { MODULE_KINDS, type LayerOptions, type LayerSource, type LayersAnalysis, type MarkerAgreement, type StepLayers } from './types.js';
import { moduleKindOfCategory } from './moduleRefs.js';
import type { NvtxColumns } from '../load/nvtxEventColumns.js';

/**
 * Every step's kernels split by decoder layer and module kind: the kernels are placed in steps by
 * their launch call (as the iterations are attributed), then each step is split by the layerwise
 * NVTX markers its launches ran inside, or, where it has none (CUDA-graph replays, captures
 * without markers, `source: 'period'`), by the period its kernel names repeat with. `windows`
 * are the iteration rows' launch windows, index for index.
 */
export function analyzeLayers(
  loaded: LoadedExport,
  iterations: IterationAnalysis,
  windows: readonly LaunchWindow[],
  classifier: CategoryClassifier,
  opts: LayerOptions = {},
  /** NVTX rows another part holds that include the launching threads' ranges (the host-cause rows): the markers are read from them. */
  markerColumns?: NvtxColumns,
): LayersAnalysis {
  const rows = iterations.iterations;
  const useMarkers = (opts.source ?? 'auto') !== 'period';
  const markers = useMarkers ? markerSegments(readModuleMarkerRanges(loaded, markerColumns)) : null;
  const ctx: SplitContext = {
    ops: loaded.gpuOps(),
    api: loaded.apiCalls(),
    categories: classifier.categories,
    categoryOf: categoryLookup(loaded, classifier),
    graphCategory: classifier.classify('[CUDA graph]'),
    communication: classifier.categories.indexOf('communication'),
    moduleKindOfCategory: Uint8Array.from(classifier.categories, (c) => MODULE_KINDS.indexOf(moduleKindOfCategory(c))),
    markers: markers && markers.ranges > 0 ? markers : null,
    periodMemo: new Map(),
  };
  const byStep = kernelsByStep(loaded, windows);
  const steps: StepLayers[] = [];
  const sources: Partial<Record<LayerSource, number>> = {};
  const agreement = { steps: 0, same: 0, min: Infinity, sum: 0 };
  for (let s = 0; s < rows.length; s++) {
    const opIdx = byStep.ops.subarray(byStep.offsets[s], byStep.offsets[s + 1]);
    const callIdx = byStep.calls.subarray(byStep.offsets[s], byStep.offsets[s + 1]);
    const a = assignStep(ctx, opIdx, callIdx, ctx.markers !== null);
    const step = stepFigures(ctx, rows[s], opIdx, a);
    if (opts.spans) step.spans = layerSpans(ctx, opIdx, a);
    steps.push(step);
    sources[a.source] = (sources[a.source] ?? 0) + 1;
    // Where markers split the step, the inference is checked against them.
    if (a.source !== 'period') checkInference(ctx, opIdx, a.layer, step.layers.length, agreement);
  }
  const agreed: MarkerAgreement | null = agreement.steps
    ? { steps: agreement.steps, sameLayerCount: agreement.same, minShareSameLayer: agreement.min, meanShareSameLayer: agreement.sum / agreement.steps }
    : null;
  return { sources, categories: classifier.categories, steps, phases: summarizePhases(steps, opts.outlierRatio), agreement: agreed, notes: layerNotes(steps, sources, agreed, markers) };
}

/** A kernel name id's category index, classified once per id (a dense table over the ids). */
function categoryLookup(loaded: LoadedExport, classifier: CategoryClassifier): (nameId: number) => number {
  const table = new StringIdTable(loaded.rowBound('StringIds'));
  return (nameId) => {
    const c = table.get(nameId);
    if (c >= 0) return c;
    const fresh = classifier.classify(loaded.stringOf(nameId) ?? '');
    table.set(nameId, fresh);
    return fresh;
  };
}

/** Adds one marker-split step to the agreement: the share of its kernel ns the inference puts in the same layer. */
function checkInference(ctx: SplitContext, opIdx: Int32Array, markerLayer: Int32Array, markerLayers: number, acc: { steps: number; same: number; min: number; sum: number }): void {
  const split = inferredSplit(ctx, opIdx);
  let total = 0;
  let same = 0;
  for (let k = 0; k < opIdx.length; k++) {
    const i = opIdx[k];
    const dur = ctx.ops.end[i] - ctx.ops.start[i];
    total += dur;
    if ((split ? split.layerOf[k] : -1) === markerLayer[k]) same += dur;
  }
  const share = total > 0 ? same / total : 1;
  acc.steps++;
  if ((split?.layers ?? 0) === markerLayers) acc.same++;
  acc.min = Math.min(acc.min, share);
  acc.sum += share;
}

function layerNotes(steps: readonly StepLayers[], sources: Partial<Record<LayerSource, number>>, agreement: MarkerAgreement | null, markers: MarkerSegments | null): string[] {
  const notes: string[] = [];
  const what = markers?.source === 'torch-modules' ? 'PyTorch-profiler module spans (nn.Module: ...)' : 'layerwise NVTX module ranges';
  if (markers) notes.push(markers.ranges ? `${markers.ranges} ${what} read` : 'no layerwise NVTX module ranges in the export');
  if (sources['layerwise-nvtx']) notes.push(`${sources['layerwise-nvtx']} steps split by the layerwise NVTX markers their launches ran in`);
  if (sources['torch-modules']) notes.push(`${sources['torch-modules']} steps split by the PyTorch-profiler module spans their launches ran in`);
  const inferred = steps.filter((s) => s.source === 'period');
  if (inferred.length) {
    const split = inferred.filter((s) => s.fit);
    const fits = split.map((s) => s.fit!.fitShare);
    const mean = fits.length ? fits.reduce((a, b) => a + b, 0) / fits.length : 0;
    notes.push(
      `${inferred.length} steps split by inference (no layer marker: the kernel sequence repeats once per layer); ${split.length} found a period` +
        (fits.length ? `, fit ${(Math.min(...fits) * 100).toFixed(1)}% to ${(Math.max(...fits) * 100).toFixed(1)}% of their kernels (mean ${(mean * 100).toFixed(1)}%)` : '') +
        '; module kinds there come from kernel categories',
    );
    if (split.length < inferred.length) notes.push(`${inferred.length - split.length} steps have no repeating kernel sequence: all their time is outside any layer`);
  }
  if (agreement) {
    notes.push(
      `inferred split against the markers on ${agreement.steps} steps: same layer count in ${agreement.sameLayerCount}, ` +
        `${(agreement.minShareSameLayer * 100).toFixed(1)}% (lowest) / ${(agreement.meanShareSameLayer * 100).toFixed(1)}% (mean) of kernel time in the same layer`,
    );
  }
  return notes;
}
