import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DurationBuffer, durationStats, selectInPlace } from '../../src/math/durationStats.js';

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

describe('DurationBuffer: Uint32 while every duration is a whole ns below 2^32, the same statistics either way (fast-check)', () => {
  const whole = fc.array(fc.integer({ min: 0, max: 2 ** 32 - 1 }), { minLength: 1, maxLength: 100 });
  const odd = fc.constantFrom(2 ** 32, 2 ** 40 + 3, 0.5, 12.25, -0);

  it('whole durations below 2^32 stay in a Uint32Array, with every statistic of the Float64 values', () => {
    fc.assert(
      fc.property(whole, (values) => {
        const buf = new DurationBuffer(1);
        for (const v of values) buf.push(v);
        const view = buf.view();
        expect(view).toBeInstanceOf(Uint32Array);
        expect(Array.from(view)).toEqual(values);
        expect(durationStats(view)).toEqual(durationStats(Float64Array.from(values)));
      }),
    );
  });

  it('a duration past 2^32, a fraction or -0 moves the buffer to Float64, every value kept, wherever it comes', () => {
    fc.assert(
      fc.property(whole, odd, fc.nat(), (values, v, at) => {
        const all = [...values];
        all.splice(at % (values.length + 1), 0, v);
        const buf = new DurationBuffer(2);
        for (const x of all) buf.push(x);
        const view = buf.view();
        expect(view).toBeInstanceOf(Float64Array);
        expect(view).toEqual(Float64Array.from(all));
        expect(durationStats(view)).toEqual(durationStats(Float64Array.from(all)));
      }),
    );
  });
});
