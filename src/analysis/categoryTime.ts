import type { ColumnTable } from 'arquero';
import { aq, op } from '../math/arqueroOps.js';
import type { KernelSummary } from './kernelSummary.js';
import type { CategoryClassifier } from '../categories/rules.js';
import { PHASES, type Phase } from '../iterations/phase.js';
import type { IterationAnalysis, IterationRow } from '../iterations/types.js';

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
 * The iterations' side is summed in one pass over them (`iterationCategoryTotals`,
 * `phaseTotals`): a long capture has thousands of iterations times their categories, and arquero's
 * groupby over that long table took most of this step's ~60 ms on pytorch-dense-long. Arquero then
 * composes the small per-category tables: the capture's kernel time by category, full-outer-joined
 * on the category to the iterations' totals, filtered, given percentages and ordered. Sums run in
 * row order, as arquero's `op.sum` and the plain loops before it did.
 */
export function categoryTime(analysis: IterationAnalysis | null, kernels: KernelSummary, classifier: CategoryClassifier): CategoryTime {
  const iterations = analysis?.iterations ?? [];
  const { phases, iterationKernelNs } = phaseTotals(iterations);
  const iterationTotals = iterationCategoryTotals(iterations);

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

/**
 * The phases that have iterations, in `PHASES` order, with their iteration counts and kernel time,
 * and the kernel time of every iteration (any phase): sums in iteration order.
 */
export function phaseTotals(iterations: readonly IterationRow[]): Pick<CategoryTime, 'phases' | 'iterationKernelNs'> {
  const count = new Array<number>(PHASES.length).fill(0);
  const ns = new Array<number>(PHASES.length).fill(0);
  let iterationKernelNs = 0;
  for (const r of iterations) {
    iterationKernelNs += r.kernelNs;
    const k = PHASES.indexOf(r.phase);
    if (k < 0) continue;
    count[k]++;
    ns[k] += r.kernelNs;
  }
  const phases = PHASES.flatMap((phase, k) => (count[k] > 0 ? [{ phase, iterations: count[k], kernelNs: ns[k] }] : []));
  return { phases, iterationKernelNs };
}

/**
 * Per category with time in some iteration (in the order categories are first met, iteration by
 * iteration): its kernel time over the iterations (`iterationNs`), by phase (`phaseNs`, phases in
 * the order first met with that category), and that order (`iterationSeen`, from 1). A table of a
 * handful of rows, one pass over the iterations' non-zero `categoryNs`.
 */
export function iterationCategoryTotals(iterations: readonly IterationRow[]): ColumnTable {
  const byCategory = new Map<string, { iterationNs: number; phaseNs: Partial<Record<Phase, number>> }>();
  for (const r of iterations) {
    for (const [c, v] of Object.entries(r.categoryNs)) {
      if (!v) continue;
      let t = byCategory.get(c);
      if (!t) byCategory.set(c, (t = { iterationNs: 0, phaseNs: {} }));
      t.iterationNs += v;
      t.phaseNs[r.phase] = (t.phaseNs[r.phase] ?? 0) + v;
    }
  }
  const totals = [...byCategory.values()];
  return aq.table({
    category: [...byCategory.keys()],
    iterationNs: totals.map((t) => t.iterationNs),
    iterationSeen: totals.map((_, i) => i + 1),
    phaseNs: totals.map((t) => t.phaseNs),
  });
}

/** Sum of a column in row order; 0 for an empty table. */
function sumOf(table: ColumnTable, name: string): number {
  return ((table.rollup({ total: op.sum(name) }).objects()[0] as { total?: number }).total ?? 0);
}
