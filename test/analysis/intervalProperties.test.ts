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

/** The union by definition: the intervals with a length, by start, each joining the last when it starts at or before its end. */
function unionByDefinition(starts: number[], ends: number[]): { starts: number[]; ends: number[] } {
  const ps = starts.map((s, i) => [s, ends[i]]).filter(([s, e]) => e > s).sort((a, b) => a[0] - b[0]);
  const out = { starts: [] as number[], ends: [] as number[] };
  for (const [s, e] of ps) {
    const k = out.ends.length - 1;
    if (k >= 0 && s <= out.ends[k]) out.ends[k] = Math.max(out.ends[k], e);
    else {
      out.starts.push(s);
      out.ends.push(e);
    }
  }
  return out;
}

describe('interval union of start-ordered runs (GPU ops table by table): merged by start, no sort', () => {
  /** Up to 9 runs (8 take the merge, 9 the sorts) of intervals in start order: zero-length, inverted, touching and nested ones among them. */
  const arbRun = fc
    .array(fc.tuple(fc.integer({ min: 0, max: 2_000 }), fc.integer({ min: -30, max: 300 })), { maxLength: 30 })
    .map((r) => r.sort((a, b) => a[0] - b[0]).map(([s, d]) => [s, s + d] as [number, number]));
  const arbRuns = fc.array(arbRun, { maxLength: 9 });

  it('equals the union by definition', () => {
    fc.assert(
      fc.property(arbRuns, (runs) => {
        const all = runs.flat();
        const starts = all.map((p) => p[0]);
        const ends = all.map((p) => p[1]);
        const u = unionIntervals(Float64Array.from(starts), Float64Array.from(ends));
        const expected = unionByDefinition(starts, ends);
        expect(Array.from(u.starts)).toEqual(expected.starts);
        expect(Array.from(u.ends)).toEqual(expected.ends);
      }),
      { numRuns: 300 },
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
