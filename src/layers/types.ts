import type { Phase } from '../iterations/phase.js';

/**
 * What a kernel of a decoder step did, by the module it ran in. `other`: a module (or, without
 * module markers, a kernel category) none of the others names.
 */
export type ModuleKind = 'attention' | 'mlp' | 'moe' | 'norm' | 'embedding' | 'lmHead' | 'sampler' | 'communication' | 'other';
export const MODULE_KINDS: readonly ModuleKind[] = ['attention', 'mlp', 'moe', 'norm', 'embedding', 'lmHead', 'sampler', 'communication', 'other'];

/**
 * Where a step's layers came from:
 * - `layerwise-nvtx`: SGLang's `--enable-layerwise-nvtx-marker` / vLLM's
 *   `--enable-layerwise-nvtx-tracing` ranges (`{'Module': 'model.layers.3.self_attn', ...}`);
 * - `torch-modules`: the PyTorch profiler's module spans (`with_stack`: `nn.Module: DecoderLayer_3`);
 * - `period`: inferred, no marker in the step (the kernels of a decoder repeat once per layer).
 */
export type LayerSource = 'layerwise-nvtx' | 'torch-modules' | 'period';

/** Which layer source `analyzeLayers` uses: markers where a step has them (`auto`), or inference only. */
export type LayerSourceOption = 'auto' | 'period';

/** A module named by a marker: its path, decoder layer index (null: outside any layer) and kind. */
export interface ModuleRef {
  path: string;
  layer: number | null;
  kind: ModuleKind;
}

/** One decoder layer's figures in one step. */
export interface LayerFigures {
  layer: number;
  kernelNs: number;
  kernelCount: number;
  /** kernelNs / the step's kernel ns. */
  share: number;
  categoryNs: Record<string, number>;
  kindNs: Partial<Record<ModuleKind, number>>;
  /** Times this layer index ran in the step (a prefill of k requests one at a time: k). */
  passes: number;
}

/** How well an inferred split fits its step (`period` source). */
export interface PeriodFit {
  /** Kernels per layer. */
  period: number;
  /** Layers found (the most in one run of repeats). */
  layers: number;
  /** Runs of repeats (a prefill of k requests run one after the other: k). */
  runs: number;
  /** Share of the step's kernels inside a layer that equal the kernel one period away. */
  fitShare: number;
}

/** One step, split by layer. */
export interface StepLayers {
  iter: number;
  pid: number;
  phase: Phase;
  source: LayerSource;
  /** KV tokens of the step when the iteration row has them (vLLM's detailed annotation). */
  kvTokens: number | null;
  kernelNs: number;
  kernelCount: number;
  layers: LayerFigures[];
  /** Kernels of the step in no layer (embedding, final norm, LM head, sampling), by kind. */
  outsideNs: number;
  outsideCount: number;
  outsideKindNs: Partial<Record<ModuleKind, number>>;
  /** Copies and memsets of the step (never in a layer). */
  memcpyNs: number;
  memsetNs: number;
  /** Kernel ns of the whole step by module kind (inside and outside layers). */
  kindNs: Partial<Record<ModuleKind, number>>;
  /** Present for an inferred split. */
  fit?: PeriodFit;
  /** Where each layer ran on each device (`LayerOptions.spans`, for `trace --layers`); absent otherwise. */
  spans?: LayerSpan[];
}

/**
 * One pass of a layer in one step on one device (its kernels consecutive in launch order), first
 * kernel start to last kernel end (a layer run k times in the step, a prefill of k requests one after
 * the other: k spans); or a run of the step's kernels outside any layer (`layer` null).
 */
export interface LayerSpan {
  deviceId: number;
  layer: number | null;
  startNs: number;
  endNs: number;
  kernelNs: number;
  kernelCount: number;
  kindNs: Partial<Record<ModuleKind, number>>;
}

/** A layer whose time stands out from the others. */
export interface OutlierLayer {
  layer: number;
  /** Mean kernel ns per step in the phase. */
  meanNs: number;
  /** meanNs / the median layer's. */
  overMedian: number;
  /** Steps where this layer was over the bar (at most 20 listed). */
  steps: number[];
}

/** Per phase: per layer index, what it costs on average per step, and the spread. */
export interface PhaseLayers {
  phase: Phase;
  steps: number;
  /** Layer count most steps have. */
  layerCount: number;
  layers: { layer: number; meanNs: number; maxNs: number; meanCount: number; share: number; categoryNs: Record<string, number>; kindNs: Partial<Record<ModuleKind, number>> }[];
  kindNs: Partial<Record<ModuleKind, number>>;
  meanStepKernelNs: number;
  meanOutsideNs: number;
  outsideShare: number;
  /** Median over layers of their mean ns; max/median. */
  medianLayerNs: number;
  maxOverMedian: number;
  outliers: OutlierLayer[];
}

/** The layer analysis of an export (`layers` part). */
export interface LayersAnalysis {
  /** Sources used, with the steps each gave. */
  sources: Partial<Record<LayerSource, number>>;
  categories: string[];
  steps: StepLayers[];
  phases: PhaseLayers[];
  /** The split checked against markers where both exist (`period` inferred on steps that have markers). */
  agreement: MarkerAgreement | null;
  notes: string[];
}

/** Inferred split against markers on the same steps. */
export interface MarkerAgreement {
  steps: number;
  /** Steps whose inferred layer count equals the markers'. */
  sameLayerCount: number;
  /** Lowest, over steps, share of kernel ns put in the same layer index by both. */
  minShareSameLayer: number;
  meanShareSameLayer: number;
}

/** Options of the layer analysis. */
export interface LayerOptions {
  source?: LayerSourceOption;
  /** A layer is an outlier from this many times the median layer (default 1.5). */
  outlierRatio?: number;
  /** Also each step's layer spans per device (`StepLayers.spans`: what `trace --layers` draws). */
  spans?: boolean;
}
