import type { ColumnTable } from 'arquero';
import { aq, op } from '../math/arqueroOps.js';
import type { KernelSummary } from '../analysis/kernelSummary.js';
import type { CategoryClassifier } from './rules.js';
import { PHASES, type IterationAnalysis, type Phase } from '../iterations/analyzeIterations.js';

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

/**
 * Kernel time by category, overall and per phase (context-only, mixed, generation-only): sums of
 * the per-iteration `categoryNs`, so every number adds up to what `iterations` prints. The
 * whole-capture column classifies the `kernels` summary rows with the same rules (kernels launched
 * outside any iteration window are only there).
 *
 * Built with arquero: the iterations' non-zero `categoryNs` as one long (category, phase, ns) table
 * summed by category and pivoted by phase (`phaseNs`), full-outer-joined on the category to the
 * capture's kernel time by category. Sums run in row order, as the plain loops did.
 */
export function categoryTime(analysis: IterationAnalysis | null, kernels: KernelSummary, classifier: CategoryClassifier): CategoryTime {
  const iterations = analysis?.iterations ?? [];
  const perIteration = aq.table({ phaseOrder: iterations.map((r) => PHASES.indexOf(r.phase)), phase: iterations.map((r) => r.phase), kernelNs: iterations.map((r) => r.kernelNs) });
  const iterationKernelNs = sumOf(perIteration, 'kernelNs');
  const phases = (
    perIteration
      .filter((d: { phaseOrder: number }) => d.phaseOrder >= 0)
      .groupby('phaseOrder', 'phase')
      .rollup({ iterations: op.count(), kernelNs: op.sum('kernelNs') })
      .orderby('phaseOrder')
      .objects() as { phase: Phase; iterations: number; kernelNs: number }[]
  ).map(({ phase, iterations: n, kernelNs }) => ({ phase, iterations: n, kernelNs }));

  // Kernel time in iterations: one row per iteration and category with time.
  const category: string[] = [];
  const phase: Phase[] = [];
  const ns: number[] = [];
  for (const r of iterations) {
    for (const [c, v] of Object.entries(r.categoryNs)) {
      if (!v) continue;
      category.push(c);
      phase.push(r.phase);
      ns.push(v);
    }
  }
  const inIterations = aq.table({ category, phase, ns });
  const byPhase = inIterations
    .groupby('category', 'phase')
    .rollup({ ns: op.sum('ns') })
    .groupby('category')
    .rollup({ phaseNs: op.object_agg('phase', 'ns') });
  const iterationTotals = inIterations
    .groupby('category')
    .rollup({ iterationNs: op.sum('ns') })
    .derive({ iterationSeen: op.row_number() })
    .join_left(byPhase, 'category');

  // Kernel time of the whole capture, by the category of each kernel summary row.
  const capture = aq.table({ category: kernels.rows.map((k) => classifier.categories[classifier.classify(k.name)]), ns: kernels.rows.map((k) => k.total) });
  const captureKernelNs = sumOf(capture, 'ns');
  const captureTotals = capture.groupby('category').rollup({ captureNs: op.sum('ns') }).derive({ captureSeen: op.row_number() });

  const order = analysis?.categories ?? classifier.categories;
  const rank = (c: string) => {
    const i = order.indexOf(c);
    return i < 0 ? order.length : i;
  };
  const rows = iterationTotals
    .join_full(captureTotals, 'category')
    .params({ iterationKernelNs, captureKernelNs, iterationCategories: iterationTotals.numRows() })
    .derive({
      iterationNs: (d: { iterationNs?: number }) => d.iterationNs ?? 0,
      captureNs: (d: { captureNs?: number }) => d.captureNs ?? 0,
      rank: aq.escape((d: { category: string }) => rank(d.category)),
      // Ties keep the order categories were first met: in iterations, then in the capture.
      seen: (d: { iterationSeen?: number; captureSeen: number }, $: { iterationCategories: number }) => d.iterationSeen ?? $.iterationCategories + d.captureSeen,
    })
    .filter((d: { iterationNs: number; captureNs: number }) => d.iterationNs > 0 || d.captureNs > 0)
    .derive({
      iterationPercent: (d: { iterationNs: number }, $: { iterationKernelNs: number }) => ($.iterationKernelNs > 0 ? (d.iterationNs * 100) / $.iterationKernelNs : 0),
      capturePercent: (d: { captureNs: number }, $: { captureKernelNs: number }) => ($.captureKernelNs > 0 ? (d.captureNs * 100) / $.captureKernelNs : 0),
    })
    .orderby(aq.desc('iterationNs'), aq.desc('captureNs'), 'rank', 'seen');
  return {
    rows: (rows.objects() as (CategoryTotal & { phaseNs?: CategoryTotal['phaseNs'] })[]).map((r) => ({
      category: r.category,
      iterationNs: r.iterationNs,
      iterationPercent: r.iterationPercent,
      phaseNs: r.phaseNs ?? {},
      captureNs: r.captureNs,
      capturePercent: r.capturePercent,
    })),
    phases,
    iterationKernelNs,
    captureKernelNs,
  };
}

/** Sum of a column in row order; 0 for an empty table. */
function sumOf(table: ColumnTable, name: string): number {
  return ((table.rollup({ total: op.sum(name) }).objects()[0] as { total?: number }).total ?? 0);
}
