import type { LayersAnalysis, ModuleKind, PhaseLayers, StepLayers } from '../src/layers/types.js';
import { MODULE_KINDS } from '../src/layers/types.js';
import type { TableColumn, DataTable } from './table.js';

/** Module kinds as column headers. */
const KIND_HEADERS: Record<ModuleKind, string> = {
  attention: 'Attention',
  mlp: 'MLP',
  moe: 'MoE',
  norm: 'Norm',
  embedding: 'Embedding',
  lmHead: 'LM head',
  sampler: 'Sampler',
  communication: 'Communication',
  other: 'Other kind',
};

/** Kinds with time somewhere in `maps`, in MODULE_KINDS order. */
function usedKinds(maps: readonly Partial<Record<ModuleKind, number>>[]): ModuleKind[] {
  return MODULE_KINDS.filter((k) => maps.some((m) => (m[k] ?? 0) > 0));
}

/** Categories with time somewhere in `maps`, in the analysis's order. */
function usedCategories(categories: readonly string[], maps: readonly Record<string, number>[]): string[] {
  return categories.filter((c) => maps.some((m) => (m[c] ?? 0) > 0));
}

const kindColumns = (kinds: readonly ModuleKind[]): TableColumn[] => kinds.map((k) => ({ key: `kind_${k}`, header: `${KIND_HEADERS[k]} (ns)`, kind: 'ns', group: 'kinds' }));
const categoryColumns = (cats: readonly string[]): TableColumn[] => cats.map((c) => ({ key: `cat_${c}`, header: `${c} (ns)`, kind: 'ns', group: 'categories' }));

function cellsOf(prefix: string, keys: readonly string[], values: Record<string, number | undefined>): Record<string, number> {
  return Object.fromEntries(keys.map((k) => [`${prefix}${k}`, Math.round(values[k] ?? 0)]));
}

/** Per phase, per layer: mean kernel time per step by module kind and category, share of the step. */
export function phaseLayersTable(a: LayersAnalysis): DataTable {
  const kinds = usedKinds(a.phases.flatMap((p) => p.layers.map((l) => l.kindNs)));
  const cats = usedCategories(a.categories, a.phases.flatMap((p) => p.layers.map((l) => l.categoryNs)));
  const columns: TableColumn[] = [
    { key: 'phase', header: 'Phase', kind: 'text' },
    { key: 'layer', header: 'Layer', kind: 'int' },
    { key: 'steps', header: 'Steps', kind: 'int' },
    { key: 'meanNs', header: 'Mean per step (ns)', kind: 'ns' },
    { key: 'maxNs', header: 'Max (ns)', kind: 'ns' },
    { key: 'overMedian', header: 'x median layer', kind: 'float' },
    { key: 'meanCount', header: 'Kernels per step', kind: 'float' },
    { key: 'share', header: 'Share of step', kind: 'percent' },
    ...kindColumns(kinds),
    ...categoryColumns(cats),
  ];
  const rows = a.phases.flatMap((p) =>
    p.layers.map((l) => ({
      phase: p.phase,
      layer: l.layer,
      steps: p.steps,
      meanNs: Math.round(l.meanNs),
      maxNs: Math.round(l.maxNs),
      overMedian: p.medianLayerNs > 0 ? round3(l.meanNs / p.medianLayerNs) : null,
      meanCount: round3(l.meanCount),
      share: l.share * 100,
      ...cellsOf('kind_', kinds, l.kindNs),
      ...cellsOf('cat_', cats, l.categoryNs),
    })),
  );
  return { title: 'Layers by phase (mean per step)', columns, rows, notes: a.notes };
}

/** Per phase: the spread across layers, the outliers, and time outside any layer. */
export function layerSpreadTable(a: LayersAnalysis): DataTable {
  const kinds = usedKinds(a.phases.map((p) => p.kindNs));
  const columns: TableColumn[] = [
    { key: 'phase', header: 'Phase', kind: 'text' },
    { key: 'steps', header: 'Steps', kind: 'int' },
    { key: 'layers', header: 'Layers', kind: 'int' },
    { key: 'stepNs', header: 'Kernel per step (ns)', kind: 'ns' },
    { key: 'medianLayerNs', header: 'Median layer (ns)', kind: 'ns' },
    { key: 'maxOverMedian', header: 'Max / median', kind: 'float' },
    { key: 'outliers', header: 'Outlier layers', kind: 'text' },
    { key: 'outsideNs', header: 'Outside layers per step (ns)', kind: 'ns' },
    { key: 'outsideShare', header: 'Outside share', kind: 'percent' },
    ...kindColumns(kinds),
  ];
  const rows = a.phases.map((p: PhaseLayers) => ({
    phase: p.phase,
    steps: p.steps,
    layers: p.layerCount,
    stepNs: Math.round(p.meanStepKernelNs),
    medianLayerNs: Math.round(p.medianLayerNs),
    maxOverMedian: round3(p.maxOverMedian),
    outliers: p.outliers.map((o) => `${o.layer} (x${o.overMedian.toFixed(2)})`).join(', '),
    outsideNs: Math.round(p.meanOutsideNs),
    outsideShare: p.outsideShare * 100,
    ...cellsOf('kind_', kinds, p.kindNs),
  }));
  return { title: 'Layer spread by phase (module kinds: mean per step)', columns, rows, notes: [] };
}

/** One row per step and layer (and one for the time outside any layer): kernel time by category. */
export function stepLayersTable(a: LayersAnalysis): DataTable {
  const cats = usedCategories(a.categories, a.steps.flatMap((s) => s.layers.map((l) => l.categoryNs)));
  const multiPid = new Set(a.steps.map((s) => s.pid)).size > 1;
  const columns: TableColumn[] = [
    ...(multiPid ? [{ key: 'pid', header: 'PID', kind: 'int' } as TableColumn] : []),
    { key: 'iter', header: 'Iter', kind: 'int' },
    { key: 'phase', header: 'Phase', kind: 'text' },
    { key: 'source', header: 'Layers from', kind: 'text' },
    { key: 'fit', header: 'Period fit', kind: 'percent' },
    { key: 'layer', header: 'Layer', kind: 'text' },
    { key: 'kernelNs', header: 'Kernel (ns)', kind: 'ns' },
    { key: 'kernelCount', header: 'Kernels', kind: 'int' },
    { key: 'share', header: 'Share of step', kind: 'percent' },
    ...categoryColumns(cats),
  ];
  const rows = a.steps.flatMap((s) => [...s.layers.map((l) => layerRow(s, String(l.layer), l.kernelNs, l.kernelCount, l.categoryNs, cats)), outsideRow(s)]);
  return { title: 'Layers per step', columns, rows, notes: [] };
}

function layerRow(s: StepLayers, layer: string, ns: number, count: number, categoryNs: Record<string, number>, cats: readonly string[]) {
  return {
    pid: s.pid,
    iter: s.iter,
    phase: s.phase,
    source: s.source,
    fit: s.fit ? s.fit.fitShare * 100 : null,
    layer,
    kernelNs: Math.round(ns),
    kernelCount: count,
    share: s.kernelNs > 0 ? (ns / s.kernelNs) * 100 : 0,
    ...cellsOf('cat_', cats, categoryNs),
  };
}

/** The step's kernels outside every layer (with its copies' time in the notes of JSON only). */
function outsideRow(s: StepLayers) {
  return { ...layerRow(s, 'outside', s.outsideNs, s.outsideCount, {}, []), fit: s.fit ? s.fit.fitShare * 100 : null };
}

/**
 * One row per step: its kernel time in each layer (L0, L1, ...) and outside any layer, where the
 * layers came from, the period's fit, and the step's max/median layer (what `iterations --layers`
 * adds: one row per step, as the iterations table).
 */
export function stepLayersWideTable(a: LayersAnalysis): DataTable {
  const maxLayer = a.steps.reduce((m, s) => Math.max(m, s.layers.length ? s.layers[s.layers.length - 1].layer : -1), -1);
  const multiPid = new Set(a.steps.map((s) => s.pid)).size > 1;
  const layerKeys = Array.from({ length: maxLayer + 1 }, (_, l) => l);
  const columns: TableColumn[] = [
    ...(multiPid ? [{ key: 'pid', header: 'PID', kind: 'int' } as TableColumn] : []),
    { key: 'iter', header: 'Iter', kind: 'int' },
    { key: 'phase', header: 'Phase', kind: 'text' },
    { key: 'source', header: 'Layers from', kind: 'text' },
    { key: 'fit', header: 'Period fit', kind: 'percent' },
    { key: 'layers', header: 'Layers', kind: 'int' },
    { key: 'kernelNs', header: 'Kernel (ns)', kind: 'ns' },
    { key: 'maxOverMedian', header: 'Max / median layer', kind: 'float' },
    { key: 'outsideNs', header: 'Outside layers (ns)', kind: 'ns' },
    ...layerKeys.map((l): TableColumn => ({ key: `l${l}`, header: `L${l} (ns)`, kind: 'ns', group: 'layers' })),
  ];
  const rows = a.steps.map((s) => {
    const ns = s.layers.map((l) => l.kernelNs);
    const med = medianOf(ns);
    return {
      pid: s.pid,
      iter: s.iter,
      phase: s.phase,
      source: s.source,
      fit: s.fit ? s.fit.fitShare * 100 : null,
      layers: s.layers.length,
      kernelNs: Math.round(s.kernelNs),
      maxOverMedian: med > 0 ? round3(Math.max(...ns) / med) : null,
      outsideNs: Math.round(s.outsideNs),
      ...Object.fromEntries(s.layers.map((l) => [`l${l.layer}`, Math.round(l.kernelNs)])),
    };
  });
  return { title: 'Layers per step', columns, rows, notes: [] };
}

function medianOf(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const v = [...values].sort((x, y) => x - y);
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

/** Every layer table of an analysis: by phase, spread, and (`perStep`) per step. */
export function layersTables(a: LayersAnalysis, perStep: boolean): DataTable[] {
  return [phaseLayersTable(a), layerSpreadTable(a), ...(perStep ? [stepLayersTable(a)] : [])];
}

const round3 = (v: number): number => Math.round(v * 1000) / 1000;
