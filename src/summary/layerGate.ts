import { sketchOf, type Sketch } from '../math/sketch.js';
import type { Phase } from '../iterations/phase.js';
import { MODULE_KINDS, type LayerSource, type LayersAnalysis, type StepLayers } from '../layers/types.js';

/** One phase's layer samples: one per step for each layer index, module kind, and the time outside layers. */
export interface PhaseLayerGate {
  steps: number;
  /** The layer count most steps of the phase have (`PhaseLayers.layerCount`). */
  layerCount: number;
  /** Steps per layer source (markers or inferred). */
  sources: Partial<Record<LayerSource, number>>;
  /** `layer N per iteration`, `module <kind> per iteration`, `outside layers per iteration`: kernel ns per step. */
  samples: Record<string, Sketch>;
}

/** The layer split's samples by phase (`compare --layers`, `summarize --layers`). */
export interface LayerGate {
  phases: Partial<Record<Phase, PhaseLayerGate>>;
}

export const layerMetric = (layer: number) => `layer ${layer} per iteration`;
export const moduleMetric = (kind: string) => `module ${kind} per iteration`;
export const OUTSIDE_LAYERS_METRIC = 'outside layers per iteration';

/**
 * Per phase, one sample per step of each layer's kernel ns (all its passes; 0 where the step lacks
 * the layer), each module kind's (inside and outside layers), and the ns outside any layer.
 */
export function layerGateOf(layers: LayersAnalysis): LayerGate {
  const phases: LayerGate['phases'] = {};
  for (const p of layers.phases) {
    const steps = layers.steps.filter((s) => s.phase === p.phase);
    const sources: PhaseLayerGate['sources'] = {};
    for (const s of steps) sources[s.source] = (sources[s.source] ?? 0) + 1;
    const samples: Record<string, Sketch> = {};
    const indexes = [...new Set(steps.flatMap((s) => s.layers.map((f) => f.layer)))].sort((a, b) => a - b);
    for (const l of indexes) samples[layerMetric(l)] = sketchOf(steps.map((s) => layerNs(s, l)));
    for (const k of MODULE_KINDS) if (steps.some((s) => s.kindNs[k])) samples[moduleMetric(k)] = sketchOf(steps.map((s) => s.kindNs[k] ?? 0));
    samples[OUTSIDE_LAYERS_METRIC] = sketchOf(steps.map((s) => s.outsideNs));
    phases[p.phase] = { steps: steps.length, layerCount: p.layerCount, sources, samples };
  }
  return { phases };
}

function layerNs(s: StepLayers, layer: number): number {
  return s.layers.find((f) => f.layer === layer)?.kernelNs ?? 0;
}
