import type { Phase } from '../iterations/phase.js';
import type { ModuleKind, OutlierLayer, PhaseLayers, StepLayers } from './types.js';

/** A layer is an outlier from this many times the median layer (its phase's mean per step). */
export const DEFAULT_OUTLIER_RATIO = 1.5;
/** Steps listed as an outlier's evidence, at most. */
const MAX_EVIDENCE_STEPS = 20;

function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function addInto<K extends string>(into: Partial<Record<K, number>>, from: Partial<Record<K, number>>, scale = 1): void {
  for (const k of Object.keys(from) as K[]) into[k] = (into[k] ?? 0) + (from[k] ?? 0) * scale;
}

/** Per phase (in first-seen order), per layer index: mean per step, spread and outliers. */
export function summarizePhases(steps: readonly StepLayers[], outlierRatio = DEFAULT_OUTLIER_RATIO): PhaseLayers[] {
  const byPhase = new Map<Phase, StepLayers[]>();
  for (const s of steps) {
    const l = byPhase.get(s.phase);
    if (l) l.push(s);
    else byPhase.set(s.phase, [s]);
  }
  return [...byPhase].map(([phase, list]) => phaseLayers(phase, list, outlierRatio));
}

function phaseLayers(phase: Phase, list: readonly StepLayers[], ratio: number): PhaseLayers {
  const n = list.length;
  const acc = new Map<number, { ns: number; max: number; count: number; categoryNs: Record<string, number>; kindNs: Partial<Record<ModuleKind, number>> }>();
  const kindNs: Partial<Record<ModuleKind, number>> = {};
  let stepNs = 0;
  let outsideNs = 0;
  for (const s of list) {
    stepNs += s.kernelNs;
    outsideNs += s.outsideNs;
    addInto(kindNs, s.kindNs, 1 / n);
    for (const f of s.layers) {
      let a = acc.get(f.layer);
      if (!a) acc.set(f.layer, (a = { ns: 0, max: 0, count: 0, categoryNs: {}, kindNs: {} }));
      a.ns += f.kernelNs;
      a.max = Math.max(a.max, f.kernelNs);
      a.count += f.kernelCount;
      addInto(a.categoryNs, f.categoryNs, 1 / n);
      addInto(a.kindNs, f.kindNs, 1 / n);
    }
  }
  const layers = [...acc]
    .sort((x, y) => x[0] - y[0])
    .map(([layer, a]) => ({ layer, meanNs: a.ns / n, maxNs: a.max, meanCount: a.count / n, share: stepNs > 0 ? a.ns / stepNs : 0, categoryNs: a.categoryNs, kindNs: a.kindNs }));
  const med = median(layers.map((l) => l.meanNs));
  const max = layers.reduce((m, l) => Math.max(m, l.meanNs), 0);
  return {
    phase,
    steps: n,
    layerCount: modeOf(list.map((s) => s.layers.length)),
    layers,
    kindNs,
    meanStepKernelNs: stepNs / n,
    meanOutsideNs: outsideNs / n,
    outsideShare: stepNs > 0 ? outsideNs / stepNs : 0,
    medianLayerNs: med,
    maxOverMedian: med > 0 ? max / med : 0,
    outliers: med > 0 ? outliersOf(list, layers, med, ratio) : [],
  };
}

/** Layers at `ratio` times the median or more, with the steps where they were (against that step's median layer). */
function outliersOf(list: readonly StepLayers[], layers: readonly { layer: number; meanNs: number }[], med: number, ratio: number): OutlierLayer[] {
  return layers
    .filter((l) => l.meanNs >= ratio * med)
    .map((l) => {
      const steps: number[] = [];
      for (const s of list) {
        const f = s.layers.find((x) => x.layer === l.layer);
        const stepMedian = median(s.layers.map((x) => x.kernelNs));
        if (f && stepMedian > 0 && f.kernelNs >= ratio * stepMedian && steps.length < MAX_EVIDENCE_STEPS) steps.push(s.iter);
      }
      return { layer: l.layer, meanNs: l.meanNs, overMedian: l.meanNs / med, steps };
    });
}

function modeOf(values: readonly number[]): number {
  const counts = new Map<number, number>();
  let best = 0;
  let bestCount = 0;
  for (const v of values) {
    const c = (counts.get(v) ?? 0) + 1;
    counts.set(v, c);
    if (c > bestCount || (c === bestCount && v > best)) {
      best = v;
      bestCount = c;
    }
  }
  return best;
}
