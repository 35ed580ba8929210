import { describe, expect, it } from 'vitest';
import { aq, op } from '../../src/math/arqueroOps.js';
import { percentile } from '../../src/math/percentile.js';
import { withExport } from '../../src/export/openExport.js';
import { analyzeIterations } from '../../src/iterations/analyzeIterations.js';
import { fixture } from '../helpers/fixtures.js';
import { LoadedExport } from '../../src/load/loadedExport.js';

/** The registered `op.percentile` of each group, as a Map group -> value. */
function groupPercentiles(t: ReturnType<typeof aq.table>, p: number): Map<string, number> {
  const out = t.groupby('g').rollup({ v: `op.percentile(d.v, ${p})` }).objects() as { g: string; v: number }[];
  return new Map(out.map((r) => [r.g, r.v]));
}

describe('op.percentile (arquero aggregate) = percentile (nearest rank)', () => {
  it('on small sets, including one value, ties and p = 0 / 100, and differs from arquero quantile', () => {
    const sets: Record<string, number[]> = { one: [7], ties: [3, 1, 3, 3, 2], odd: [9, 1, 5, 7, 3], even: [40, 10, 30, 20] };
    const g = Object.entries(sets).flatMap(([k, v]) => v.map(() => k));
    const t = aq.table({ g, v: Object.values(sets).flat() });
    for (const p of [0, 1, 25, 50, 90, 99, 100]) {
      const got = groupPercentiles(t, p);
      for (const [k, v] of Object.entries(sets)) expect(got.get(k), `${k} p${p}`).toBe(percentile(v, p));
    }
    // Nearest rank picks a member of the set; arquero's quantile interpolates (25 for 10..40 at 0.5).
    expect(percentile(sets.even, 50)).toBe(20);
    expect((t.filter((d: { g: string }) => d.g === 'even').rollup({ q: op.quantile('v', 0.5) }).objects()[0] as { q: number }).q).toBe(25);
  });

  it('on the GPU busy time of the pytorch-dense iterations, per phase', () => {
    const rows = withExport(fixture('pytorch-dense', 'trace.sqlite'), (h) => analyzeIterations(new LoadedExport(h), {}).iterations);
    const t = aq.table({ g: rows.map((r) => r.phase), v: rows.map((r) => r.gpuBusyNs) });
    const phases = [...new Set(rows.map((r) => r.phase))];
    expect(phases.length).toBeGreaterThan(1);
    for (const p of [50, 90, 99]) {
      const got = groupPercentiles(t, p);
      for (const phase of phases) {
        const values = rows.filter((r) => r.phase === phase).map((r) => r.gpuBusyNs);
        expect(got.get(phase)).toBe(percentile(values, p));
        expect(values).toContain(got.get(phase));
      }
    }
  });
});
