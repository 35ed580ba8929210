/**
 * `innermostSegmentsOf` (what the gap analysis calls per gap and launching thread) against a
 * brute-force oracle: cut [a, b) at every range boundary, give each elementary piece the range
 * that contains it and started last (ties: ends first, then later in the list), merge equal
 * neighbours. And `ThreadRanges.overlapping`, the cursor that feeds it, against a plain filter.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { innermostSegments, innermostSegmentsOf, type NamedRange, type NamedSegments } from '../../src/gaps/attributeCauses.js';
import { ThreadRanges } from '../../src/gaps/hostCauses.js';

const arbRanges = fc.array(fc.record({ start: fc.integer({ min: -20, max: 120 }), len: fc.integer({ min: -5, max: 80 }), name: fc.constantFrom('a', 'b', 'c') }), { maxLength: 8 }).map((rs): NamedRange[] => rs.map((r) => ({ start: r.start, end: r.start + r.len, name: r.name })));

function oracle(ranges: readonly NamedRange[], a: number, b: number): NamedSegments {
  const out: NamedSegments = { starts: [], ends: [], names: [] };
  const points = [...new Set([a, b, ...ranges.flatMap((r) => [r.start, r.end])])].filter((x) => x >= a && x <= b).sort((x, y) => x - y);
  for (let k = 0; k + 1 < points.length; k++) {
    const [x, y] = [points[k], points[k + 1]];
    let best: NamedRange | null = null;
    for (const r of ranges) {
      if (!(r.end > r.start) || r.start > x || r.end < y) continue;
      if (!best || r.start > best.start || (r.start === best.start && r.end <= best.end)) best = r;
    }
    if (!best) continue;
    const n = out.starts.length;
    if (n > 0 && out.ends[n - 1] === x && out.names[n - 1] === best.name) out.ends[n - 1] = y;
    else {
      out.starts.push(x);
      out.ends.push(y);
      out.names.push(best.name);
    }
  }
  return out;
}

describe('innermostSegmentsOf (property: equals the elementary-piece oracle)', () => {
  it('gives each instant of the gap its innermost open range', () => {
    fc.assert(
      fc.property(arbRanges, fc.integer({ min: -10, max: 100 }), fc.integer({ min: 0, max: 90 }), (ranges, a, len) => {
        const want = oracle(ranges, a, a + len);
        const columns = { starts: ranges.map((r) => r.start), ends: ranges.map((r) => r.end), names: ranges.map((r) => r.name) };
        expect(innermostSegmentsOf(columns, a, a + len)).toEqual(want);
        expect(innermostSegments(ranges, a, a + len)).toEqual(want);
      }),
      { numRuns: 1000 },
    );
  });

  it('with many ranges in the gap (past 64 cut points the sort of the cut points takes its other path)', () => {
    const many = fc.array(fc.record({ start: fc.integer({ min: 0, max: 1000 }), len: fc.integer({ min: 1, max: 300 }), name: fc.constantFrom('a', 'b', 'c') }), { minLength: 40, maxLength: 90 });
    fc.assert(
      fc.property(many, (rs) => {
        const ranges = rs.map((r) => ({ start: r.start, end: r.start + r.len, name: r.name }));
        const want = oracle(ranges, 50, 1200);
        expect(innermostSegmentsOf({ starts: ranges.map((r) => r.start), ends: ranges.map((r) => r.end), names: ranges.map((r) => r.name) }, 50, 1200)).toEqual(want);
      }),
      { numRuns: 200 },
    );
  });
});

describe('ThreadRanges.overlapping (property: equals a filter, for queries in time order)', () => {
  it('returns the ranges overlapping each query in start order, and restarts when a query goes back', () => {
    const arbQueries = fc.array(fc.tuple(fc.integer({ min: -20, max: 150 }), fc.integer({ min: 0, max: 60 })), { minLength: 1, maxLength: 10 });
    fc.assert(
      fc.property(arbRanges, arbQueries, fc.boolean(), (ranges, queries, inOrder) => {
        const tr = new ThreadRanges(
          ranges.map((r) => r.start),
          ranges.map((r) => r.end),
          ranges.map((_, i) => i),
        );
        const qs = inOrder ? [...queries].sort((p, q) => p[0] - q[0]) : queries;
        for (const [a, len] of qs) {
          const want: number[] = [];
          for (let i = 0; i < tr.length; i++) if (tr.start[i] < a + len && tr.end[i] > a) want.push(i);
          expect(tr.overlapping(a, a + len)).toEqual(want);
        }
      }),
      { numRuns: 500 },
    );
  });
});
