/**
 * `categoryTime` (the report's "Kernel time by category") on pytorch-dense with its iteration log:
 * every figure against sums made here from the same analysis's iterations and kernel summary, in
 * row order; and its two one-pass steps, `phaseTotals` and `iterationCategoryTotals`.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { categoryTime, iterationCategoryTotals, phaseTotals } from '../../src/analysis/categoryTime.js';
import { defaultCategoryClassifier } from '../../src/categories/rules.js';
import { withExport } from '../../src/export/openExport.js';
import { PHASES } from '../../src/iterations/phase.js';
import type { IterationAnalysis } from '../../src/iterations/types.js';
import type { KernelSummary } from '../../src/analysis/kernelSummary.js';
import { parseIterationLogFile } from '../../src/logs/parse.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import { fixture } from '../helpers/fixtures.js';

let iterations: IterationAnalysis;
let kernels: KernelSummary;
beforeAll(() => {
  const a = withExport(fixture('pytorch-dense', 'trace.sqlite'), (h) =>
    analyzeExport(h, { parts: ['iterations', 'kernels'], logs: [parseIterationLogFile(fixture('pytorch-dense', 'iteration_log.txt'))] }),
  );
  iterations = a.iterations!;
  kernels = a.kernels!;
});

/** Sum in row order of `f` over the iterations `keep` accepts. */
function sumOver(keep: (r: IterationAnalysis['iterations'][number]) => boolean, f: (r: IterationAnalysis['iterations'][number]) => number): number {
  let s = 0;
  for (const r of iterations.iterations) if (keep(r)) s += f(r);
  return s;
}

describe('categoryTime (pytorch-dense, its iteration log)', () => {
  it('sums each category over the iterations, overall and per phase, as iterations prints them', () => {
    const ct = categoryTime(iterations, kernels, defaultCategoryClassifier());
    expect(ct.rows.length).toBeGreaterThan(2);
    for (const row of ct.rows) {
      expect(row.iterationNs).toBe(sumOver(() => true, (r) => r.categoryNs[row.category] ?? 0));
      for (const phase of PHASES) {
        const ns = sumOver((r) => r.phase === phase, (r) => r.categoryNs[row.category] ?? 0);
        expect(row.phaseNs[phase] ?? 0).toBe(ns);
      }
      expect(row.iterationPercent).toBeCloseTo((row.iterationNs * 100) / ct.iterationKernelNs, 9);
    }
    expect(ct.iterationKernelNs).toBe(sumOver(() => true, (r) => r.kernelNs));
    // Largest first: the iterations' time, then the capture's.
    for (let i = 1; i < ct.rows.length; i++) expect(ct.rows[i - 1].iterationNs).toBeGreaterThanOrEqual(ct.rows[i].iterationNs);
  });

  it("gives the capture's kernel time by the same rules: all of the kernel summary, at least the iterations' time", () => {
    const classifier = defaultCategoryClassifier();
    const ct = categoryTime(iterations, kernels, classifier);
    expect(ct.captureKernelNs).toBe(kernels.rows.reduce((s, k) => s + k.total, 0));
    for (const row of ct.rows) {
      const ns = kernels.rows.filter((k) => classifier.categories[classifier.classify(k.name)] === row.category).reduce((s, k) => s + k.total, 0);
      expect(row.captureNs).toBe(ns);
      expect(row.captureNs).toBeGreaterThanOrEqual(row.iterationNs);
    }
  });

  it('lists the phases that have iterations, in PHASES order, with their counts and kernel time', () => {
    const ct = categoryTime(iterations, kernels, defaultCategoryClassifier());
    const expected = PHASES.map((phase) => ({ phase, iterations: iterations.iterations.filter((r) => r.phase === phase).length, kernelNs: sumOver((r) => r.phase === phase, (r) => r.kernelNs) })).filter((p) => p.iterations > 0);
    expect(ct.phases).toEqual(expected);
    expect(ct.phases.length).toBeGreaterThan(1);
    expect(phaseTotals(iterations.iterations)).toEqual({ phases: expected, iterationKernelNs: ct.iterationKernelNs });
  });

  it('with no iterations, only the capture column', () => {
    const ct = categoryTime(null, kernels, defaultCategoryClassifier());
    expect(ct.phases).toEqual([]);
    expect(ct.iterationKernelNs).toBe(0);
    expect(ct.rows.every((r) => r.iterationNs === 0 && r.captureNs > 0 && Object.keys(r.phaseNs).length === 0)).toBe(true);
  });
});

describe('iterationCategoryTotals', () => {
  it('one row per category in the order first met, with its phases in the order first met', () => {
    const rows = iterationCategoryTotals(iterations.iterations).objects() as { category: string; iterationNs: number; iterationSeen: number; phaseNs: Record<string, number> }[];
    const firstMet: string[] = [];
    const phasesMet = new Map<string, string[]>();
    for (const r of iterations.iterations) {
      for (const [c, v] of Object.entries(r.categoryNs)) {
        if (!v) continue;
        if (!firstMet.includes(c)) firstMet.push(c);
        const ps = phasesMet.get(c) ?? [];
        if (!ps.includes(r.phase)) ps.push(r.phase);
        phasesMet.set(c, ps);
      }
    }
    expect(rows.map((r) => r.category)).toEqual(firstMet);
    expect(rows.map((r) => r.iterationSeen)).toEqual(firstMet.map((_, i) => i + 1));
    for (const r of rows) expect(Object.keys(r.phaseNs)).toEqual(phasesMet.get(r.category));
  });
});
