import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  clipIntervals,
  coveredLength,
  firstEndingAfter,
  gapsWithin,
  intersectIntervals,
  intersectionLength,
  overlapLength,
  subtractIntervals,
  unionIntervals,
  type IntervalSet,
} from '../../src/math/intervals.js';

const set = (pairs: [number, number][]): IntervalSet => ({ starts: Float64Array.from(pairs, (p) => p[0]), ends: Float64Array.from(pairs, (p) => p[1]) });
const pairs = (s: IntervalSet): [number, number][] => Array.from(s.starts, (v, i) => [v, s.ends[i]]);
const union = (ps: [number, number][]) => pairs(unionIntervals(ps.map((p) => p[0]), ps.map((p) => p[1])));

/** Brute force on integer points: which unit cells [t, t+1) the intervals cover. */
function cells(ps: [number, number][], lo = 0, hi = 64): boolean[] {
  const out = new Array(hi - lo).fill(false);
  for (const [s, e] of ps) for (let t = Math.max(s, lo); t < Math.min(e, hi); t++) out[t - lo] = true;
  return out;
}
function cellsToPairs(c: boolean[]): [number, number][] {
  const out: [number, number][] = [];
  for (let t = 0; t < c.length; t++) {
    if (!c[t]) continue;
    if (out.length && out[out.length - 1][1] === t) out[out.length - 1][1] = t + 1;
    else out.push([t, t + 1]);
  }
  return out;
}

describe('unionIntervals', () => {
  it('merges overlapping ops of different streams', () => {
    expect(union([[0, 10], [5, 15], [20, 30]])).toEqual([[0, 15], [20, 30]]);
  });
  it('swallows nested intervals', () => {
    expect(union([[0, 100], [10, 20], [30, 40], [90, 100]])).toEqual([[0, 100]]);
  });
  it('merges touching intervals (half-open [a,b) and [b,c))', () => {
    expect(union([[0, 10], [10, 20], [20, 25]])).toEqual([[0, 25]]);
  });
  it('ignores zero-length and inverted intervals', () => {
    expect(union([[5, 5], [0, 3], [8, 6], [10, 12], [12, 12]])).toEqual([[0, 3], [10, 12]]);
    expect(union([[7, 7]])).toEqual([]);
  });
  it('does not split a busy interval at a zero-length op inside or at its edge', () => {
    expect(union([[0, 10], [10, 10], [5, 5], [20, 30]])).toEqual([[0, 10], [20, 30]]);
  });
  it('accepts unsorted input and leaves it unmodified', () => {
    const s = Float64Array.of(50, 0, 20, 10, 55);
    const e = Float64Array.of(60, 5, 30, 25, 58);
    expect(pairs(unionIntervals(s, e))).toEqual([[0, 5], [10, 30], [50, 60]]);
    expect(Array.from(s)).toEqual([50, 0, 20, 10, 55]);
    expect(Array.from(e)).toEqual([60, 5, 30, 25, 58]);
  });
  it('handles empty input and identical intervals', () => {
    expect(union([])).toEqual([]);
    expect(union([[3, 9], [3, 9], [3, 9]])).toEqual([[3, 9]]);
  });
  it('works on large ns values exactly (session times ~1e10..1e13)', () => {
    const base = 7_013_176_276_000;
    expect(union([[base, base + 3], [base + 3, base + 7], [base + 9, base + 10]])).toEqual([[base, base + 7], [base + 9, base + 10]]);
  });
  it('equals a brute-force cover on random integer intervals (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 63 }), fc.integer({ min: 0, max: 63 })), { maxLength: 30 }), (raw) => {
        const ps = raw as [number, number][];
        const u = unionIntervals(ps.map((p) => p[0]), ps.map((p) => p[1]));
        expect(pairs(u)).toEqual(cellsToPairs(cells(ps)));
        // disjoint, sorted, non-touching
        for (let i = 1; i < u.starts.length; i++) expect(u.starts[i]).toBeGreaterThan(u.ends[i - 1]);
        // busy + gaps between first start and last end = span
        if (u.starts.length) {
          const gaps = gapsWithin(u, u.starts[0], u.ends[u.ends.length - 1]);
          expect(coveredLength(u) + coveredLength(gaps)).toBe(u.ends[u.ends.length - 1] - u.starts[0]);
        }
      }),
    );
  });
});

describe('queries on interval sets', () => {
  const s = set([[0, 10], [20, 30], [40, 50]]);
  it('coveredLength and firstEndingAfter', () => {
    expect(coveredLength(s)).toBe(30);
    expect(firstEndingAfter(s, 10)).toBe(1);
    expect(firstEndingAfter(s, 9)).toBe(0);
    expect(firstEndingAfter(s, 50)).toBe(3);
  });
  it('overlapLength clips at the bounds', () => {
    expect(overlapLength(s, 5, 45)).toBe(5 + 10 + 5);
    expect(overlapLength(s, 10, 20)).toBe(0);
    expect(overlapLength(s, 30, 30)).toBe(0);
  });
  it('gapsWithin is the complement inside the bounds', () => {
    expect(pairs(gapsWithin(s, 0, 50))).toEqual([[10, 20], [30, 40]]);
    expect(pairs(gapsWithin(s, -5, 55))).toEqual([[-5, 0], [10, 20], [30, 40], [50, 55]]);
  });
  it('intersectionLength / intersectIntervals', () => {
    const t = set([[5, 25], [45, 60]]);
    expect(intersectionLength(s, t)).toBe(5 + 5 + 5);
    expect(pairs(intersectIntervals(s, t))).toEqual([[5, 10], [20, 25], [45, 50]]);
  });
  it('clipIntervals keeps the part inside [a, b)', () => {
    expect(pairs(clipIntervals(s, 5, 45))).toEqual([[5, 10], [20, 30], [40, 45]]);
    expect(pairs(clipIntervals(s, 10, 20))).toEqual([]);
    expect(pairs(clipIntervals(s, 30, 10))).toEqual([]);
  });
  it('subtractIntervals removes covered parts, keeps the rest', () => {
    expect(pairs(subtractIntervals(set([[0, 100]]), s))).toEqual([[10, 20], [30, 40], [50, 100]]);
    expect(pairs(subtractIntervals(s, set([[5, 45]])))).toEqual([[0, 5], [45, 50]]);
    expect(pairs(subtractIntervals(s, set([])))).toEqual(pairs(s));
    expect(pairs(subtractIntervals(set([[0, 10]]), set([[0, 10]])))).toEqual([]);
    // one long subtrahend across several minuend intervals
    expect(pairs(subtractIntervals(set([[0, 2], [4, 6], [8, 12]]), set([[1, 10]])))).toEqual([[0, 1], [10, 12]]);
  });
  it('set algebra agrees with brute force (property)', () => {
    const arb = fc.array(fc.tuple(fc.integer({ min: 0, max: 63 }), fc.integer({ min: 0, max: 63 })), { maxLength: 12 });
    fc.assert(
      fc.property(arb, arb, (ra, rb) => {
        const a = unionIntervals(ra.map((p) => p[0]), ra.map((p) => p[1]));
        const b = unionIntervals(rb.map((p) => p[0]), rb.map((p) => p[1]));
        const ca = cells(pairs(a));
        const cb = cells(pairs(b));
        expect(pairs(intersectIntervals(a, b))).toEqual(cellsToPairs(ca.map((v, i) => v && cb[i])));
        expect(pairs(subtractIntervals(a, b))).toEqual(cellsToPairs(ca.map((v, i) => v && !cb[i])));
        expect(intersectionLength(a, b)).toBe(ca.filter((v, i) => v && cb[i]).length);
        expect(pairs(clipIntervals(a, 10, 40))).toEqual(cellsToPairs(ca.map((v, i) => v && i >= 10 && i < 40)));
      }),
    );
  });
});
