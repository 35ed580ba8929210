/**
 * `summarizeByPhase` (`iterations --summary`, the report's "Iterations by phase") on pytorch-dense
 * with its iteration log: every figure against what is computed here from the same rows (sums in
 * row order, nearest-rank percentiles of a sorted copy), and the per-token figures' rule (null
 * unless every row of the phase knows its count).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { PHASES } from '../../src/iterations/phase.js';
import type { IterationRow } from '../../src/iterations/types.js';
import { phaseAggregates, summarizeByPhase } from '../../src/iterations/summary.js';
import { parseIterationLogFile } from '../../src/logs/parse.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import { fixture } from '../helpers/fixtures.js';

let rows: IterationRow[];
let categories: string[];
beforeAll(() => {
  const a = withExport(fixture('pytorch-dense', 'trace.sqlite'), (h) =>
    analyzeExport(h, { parts: ['iterations'], logs: [parseIterationLogFile(fixture('pytorch-dense', 'iteration_log.txt'))] }),
  );
  rows = a.iterations!.iterations;
  categories = a.iterations!.categories;
});

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
/** Nearest rank: the ceil(p% of n)-th smallest. */
const nearestRank = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.max(1, Math.ceil((p / 100) * xs.length)) - 1];

describe('summarizeByPhase (pytorch-dense, its iteration log)', () => {
  it('one summary per phase with iterations, in PHASES order, each from its rows alone', () => {
    const summary = summarizeByPhase(rows, categories);
    expect(summary.map((s) => s.phase)).toEqual(PHASES.filter((p) => rows.some((r) => r.phase === p)));
    expect(summary.length).toBeGreaterThan(1);
    for (const s of summary) {
      const g = rows.filter((r) => r.phase === s.phase);
      const busy = g.map((r) => r.gpuBusyNs);
      const idle = g.map((r) => (r.wallNs > 0 ? r.gpuIdleNs / r.wallNs : 0));
      expect(s.iterations).toBe(g.length);
      expect(s.meanGpuBusyNs).toBe(sum(busy) / g.length);
      expect([s.p50GpuBusyNs, s.p90GpuBusyNs, s.p99GpuBusyNs]).toEqual([50, 90, 99].map((p) => nearestRank(busy, p)));
      expect(s.meanIdleShare).toBe(sum(idle) / g.length);
      expect([s.p50IdleShare, s.p90IdleShare, s.p99IdleShare]).toEqual([50, 90, 99].map((p) => nearestRank(idle, p)));
      expect(s.meanWallNs).toBe(sum(g.map((r) => r.wallNs)) / g.length);
      expect(s.meanKernelNs).toBe(sum(g.map((r) => r.kernelNs)) / g.length);
      for (const c of categories) expect(s.meanCategoryNs[c]).toBe(sum(g.map((r) => r.categoryNs[c] ?? 0)) / g.length);
      expect(s.contextTokens).toBe(sum(g.map((r) => r.contextTokens ?? 0)));
      expect(s.generationRequests).toBe(sum(g.map((r) => r.generationRequests ?? 0)));
      const kernelNs = sum(g.map((r) => r.kernelNs));
      expect(s.gpuNsPerContextToken).toBe(s.contextTokens > 0 ? kernelNs / s.contextTokens : null);
      expect(s.gpuNsPerGenerationRequest).toBe(s.generationRequests > 0 ? kernelNs / s.generationRequests : null);
    }
    // The log counts context tokens and generation requests: some phase has each figure.
    expect(summary.some((s) => s.gpuNsPerContextToken !== null)).toBe(true);
    expect(summary.some((s) => s.gpuNsPerGenerationRequest !== null)).toBe(true);
  });

  it('no per-token figure for a phase with a row whose count is unknown: never a partial sum', () => {
    const withContext = summarizeByPhase(rows, categories).find((s) => s.gpuNsPerContextToken !== null)!;
    const k = rows.findIndex((r) => r.phase === withContext.phase);
    const edited = rows.map((r, i) => (i === k ? { ...r, contextTokens: null } : r));
    const s = summarizeByPhase(edited as IterationRow[], categories).find((x) => x.phase === withContext.phase)!;
    expect(s.gpuNsPerContextToken).toBeNull();
    expect(s.contextTokens).toBe(withContext.contextTokens - (rows[k].contextTokens ?? 0));
  });

  it('phaseAggregates counts, per phase, the rows that know each count', () => {
    for (const a of phaseAggregates(rows, categories)) {
      const g = rows.filter((r) => r.phase === a.phase);
      expect(a.phaseOrder).toBe(PHASES.indexOf(a.phase as IterationRow['phase']));
      expect(a.contextTokensKnown).toBe(g.filter((r) => r.contextTokens != null).length);
      expect(a.generationRequestsKnown).toBe(g.filter((r) => r.generationRequests != null).length);
      expect(a.generationTokensKnown).toBe(g.filter((r) => r.generationTokens != null).length);
    }
  });

  it('no rows, no phases', () => {
    expect(summarizeByPhase([], categories)).toEqual([]);
  });
});
