import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { coveredLength, sortAscending, unionIntervals } from '../../src/math/intervals.js';

/** Intervals as [start, length] pairs, lengths >= 0 (zero-length ones included). */
const arbIntervals = fc.array(fc.tuple(fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 0, max: 50_000 })), { maxLength: 60 });

const union = (ps: [number, number][]) =>
  unionIntervals(
    ps.map((p) => p[0]),
    ps.map((p) => p[0] + p[1]),
  );

describe('interval union: properties (fast-check)', () => {
  it('length of the union <= sum of lengths and >= the longest interval', () => {
    fc.assert(
      fc.property(arbIntervals, (ps) => {
        const len = coveredLength(union(ps));
        const sum = ps.reduce((a, p) => a + p[1], 0);
        const max = ps.reduce((a, p) => Math.max(a, p[1]), 0);
        expect(len).toBeLessThanOrEqual(sum);
        expect(len).toBeGreaterThanOrEqual(max);
      }),
    );
  });

  it('does not depend on the order of the input', () => {
    fc.assert(
      fc.property(arbIntervals.chain((ps) => fc.tuple(fc.constant(ps), fc.shuffledSubarray(ps, { minLength: ps.length, maxLength: ps.length }))), ([ps, shuffled]) => {
        const a = union(ps);
        const b = union(shuffled as [number, number][]);
        expect(Array.from(b.starts)).toEqual(Array.from(a.starts));
        expect(Array.from(b.ends)).toEqual(Array.from(a.ends));
      }),
    );
  });

  it('is idempotent: the union of a union is itself, and disjoint and sorted', () => {
    fc.assert(
      fc.property(arbIntervals, (ps) => {
        const a = union(ps);
        const b = unionIntervals(a.starts, a.ends);
        expect(Array.from(b.starts)).toEqual(Array.from(a.starts));
        expect(Array.from(b.ends)).toEqual(Array.from(a.ends));
        for (let i = 0; i < a.starts.length; i++) {
          expect(a.ends[i]).toBeGreaterThan(a.starts[i]);
          if (i > 0) expect(a.starts[i]).toBeGreaterThan(a.ends[i - 1]);
        }
      }),
    );
  });
});

describe('sortAscending: the run-merging sort behind the union', () => {
  /** Ascending runs of integers (as nsys writes each table in time order), concatenated. */
  const arbRuns = fc.array(fc.array(fc.integer({ min: -1_000, max: 1_000_000 }), { maxLength: 40 }).map((r) => r.sort((a, b) => a - b)), { maxLength: 12 });

  it('sorts as Float64Array.prototype.sort does, with few runs (merged) and many (engine sort)', () => {
    fc.assert(
      fc.property(arbRuns, (runs) => {
        const values = Float64Array.from(runs.flat());
        const expected = values.slice().sort();
        const got = sortAscending(values);
        expect(got).toBe(values); // in place
        expect([...got]).toEqual([...expected]);
      }),
      { numRuns: 300 },
    );
  });
});
