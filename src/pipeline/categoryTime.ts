import type { KernelSummary } from '../analysis/kernelSummary.js';
import type { CategoryClassifier } from '../categories/rules.js';
import { PHASES, type IterationAnalysis, type Phase } from '../iterations/analyze.js';

/** Kernel time of one category: inside the iteration windows (overall and per phase) and over the whole capture. */
export interface CategoryTotal {
  category: string;
  /** Sum of `categoryNs[category]` over every iteration (what `iterations` prints per row). */
  iterationNs: number;
  /** Share of all kernel time in iterations, in percent. */
  iterationPercent: number;
  /** Per phase: sum over the phase's iterations. */
  phaseNs: Partial<Record<Phase, number>>;
  /** Kernel time of the whole capture (the `kernels` table's rows classified by name). */
  captureNs: number;
  capturePercent: number;
}

export interface CategoryTime {
  /** Categories with time in iterations or in the capture, by time in iterations (then capture) desc. */
  rows: CategoryTotal[];
  /** Phases that have iterations, in `PHASES` order, with their iteration counts. */
  phases: { phase: Phase; iterations: number; kernelNs: number }[];
  /** Sum of `kernelNs` over the iterations (kernels and whole-graph launches). */
  iterationKernelNs: number;
  /** Sum of the kernel summary's totals (kernels only, as `nsys stats` counts them). */
  captureKernelNs: number;
}

const percent = (part: number, whole: number) => (whole > 0 ? (part * 100) / whole : 0);

/**
 * Kernel time by category, overall and per phase (context-only, mixed, generation-only): sums of
 * the per-iteration `categoryNs`, so every number adds up to what `iterations` prints. The
 * whole-capture column classifies the `kernels` summary rows with the same rules (kernels launched
 * outside any iteration window are only there).
 */
export function categoryTime(analysis: IterationAnalysis | null, kernels: KernelSummary, classifier: CategoryClassifier): CategoryTime {
  const byCategory = new Map<string, CategoryTotal>();
  const get = (category: string): CategoryTotal => {
    let row = byCategory.get(category);
    if (!row) byCategory.set(category, (row = { category, iterationNs: 0, iterationPercent: 0, phaseNs: {}, captureNs: 0, capturePercent: 0 }));
    return row;
  };
  const phaseTotals = new Map<Phase, { iterations: number; kernelNs: number }>();
  let iterationKernelNs = 0;
  for (const r of analysis?.iterations ?? []) {
    iterationKernelNs += r.kernelNs;
    const p = phaseTotals.get(r.phase) ?? { iterations: 0, kernelNs: 0 };
    p.iterations++;
    p.kernelNs += r.kernelNs;
    phaseTotals.set(r.phase, p);
    for (const [c, ns] of Object.entries(r.categoryNs)) {
      if (!ns) continue;
      const row = get(c);
      row.iterationNs += ns;
      row.phaseNs[r.phase] = (row.phaseNs[r.phase] ?? 0) + ns;
    }
  }
  let captureKernelNs = 0;
  for (const k of kernels.rows) {
    captureKernelNs += k.total;
    get(classifier.categories[classifier.classify(k.name)]).captureNs += k.total;
  }
  for (const row of byCategory.values()) {
    row.iterationPercent = percent(row.iterationNs, iterationKernelNs);
    row.capturePercent = percent(row.captureNs, captureKernelNs);
  }
  const order = analysis?.categories ?? classifier.categories;
  const rank = (c: string) => {
    const i = order.indexOf(c);
    return i < 0 ? order.length : i;
  };
  const rows = [...byCategory.values()]
    .filter((r) => r.iterationNs > 0 || r.captureNs > 0)
    .sort((a, b) => b.iterationNs - a.iterationNs || b.captureNs - a.captureNs || rank(a.category) - rank(b.category));
  const phases = PHASES.filter((p) => phaseTotals.has(p)).map((phase) => ({ phase, ...phaseTotals.get(phase)! }));
  return { rows, phases, iterationKernelNs, captureKernelNs };
}
