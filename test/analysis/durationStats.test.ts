import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { durationStats, selectInPlace } from '../../src/math/durationStats.js';

/** The statistics by a full sort, as nsys's SQL computes them (median: mean of the middle two). */
function bySort(values: number[]) {
  const s = [...values].sort((a, b) => a - b);
  const n = s.length;
  const mid = n >> 1;
  return { min: s[0], max: s[n - 1], med: n % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2, total: s.reduce((a, b) => a + b, 0) };
}

describe('durationStats: median by selection (fast-check)', () => {
  // Durations with many repeats (as kernels have) and sorted / reversed runs.
  const arbDurations = fc.oneof(
    fc.array(fc.integer({ min: 0, max: 20 }), { minLength: 1, maxLength: 200 }),
    fc.array(fc.integer({ min: 0, max: 5_000_000 }), { minLength: 1, maxLength: 200 }),
    fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 1, maxLength: 200 }).map((a) => a.sort((x, y) => x - y)),
    fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 1, maxLength: 200 }).map((a) => a.sort((x, y) => y - x)),
  );

  it('min, max, median and total equal those of a full sort', () => {
    fc.assert(
      fc.property(arbDurations, (values) => {
        const got = durationStats(Float64Array.from(values));
        const want = bySort(values);
        expect([got.min, got.max, got.med, got.total, got.count]).toEqual([want.min, want.max, want.med, want.total, values.length]);
      }),
    );
  });

  it('selectInPlace puts the k-th smallest at k, smaller-or-equal before, larger-or-equal after', () => {
    fc.assert(
      fc.property(arbDurations.chain((v) => fc.tuple(fc.constant(v), fc.nat({ max: v.length - 1 }))), ([values, k]) => {
        const a = Float64Array.from(values);
        const v = selectInPlace(a, k);
        expect(v).toBe([...values].sort((x, y) => x - y)[k]);
        for (let i = 0; i < k; i++) expect(a[i]).toBeLessThanOrEqual(v);
        for (let i = k + 1; i < a.length; i++) expect(a[i]).toBeGreaterThanOrEqual(v);
        expect([...a].sort((x, y) => x - y)).toEqual([...values].sort((x, y) => x - y));
      }),
    );
  });
});
