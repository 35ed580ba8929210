import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { orderByStart } from '../../src/math/startOrder.js';

/** The specification: indices by (start, index), a stable sort. */
const stableOrder = (xs: number[]): number[] => xs.map((_, i) => i).sort((a, b) => xs[a] - xs[b] || a - b);

describe('orderByStart: op indices in start order, ties in index order', () => {
  /**
   * Ascending runs (as nsys writes each GPU-op table), concatenated; few distinct values so ties
   * between and within runs are common. Up to 50 runs: past 32 the comparator sort takes over.
   */
  const arbRuns = fc.array(fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 30 }).map((r) => r.sort((a, b) => a - b)), { maxLength: 50 });

  it('equals a stable sort by start, merged (few runs) or sorted (many)', () => {
    fc.assert(
      fc.property(arbRuns, (runs) => {
        const xs = runs.flat();
        expect(Array.from(orderByStart(Float64Array.from(xs)))).toEqual(stableOrder(xs));
      }),
      { numRuns: 400 },
    );
  });

  it('equals a stable sort on arbitrary (unsorted) starts', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1_000 }), { maxLength: 200 }), (xs) => {
        expect(Array.from(orderByStart(Float64Array.from(xs)))).toEqual(stableOrder(xs));
      }),
    );
  });

  it('orders only the first n values when given n', () => {
    const xs = Float64Array.from([5, 1, 3, 0, 0]);
    expect(Array.from(orderByStart(xs, 3))).toEqual([1, 2, 0]);
  });

  it('keeps read order on ties between tables (a kernel before a memcpy with the same start)', () => {
    // Two runs: [10, 20, 30] then [10, 20]: each tie goes to the earlier run first.
    expect(Array.from(orderByStart(Float64Array.from([10, 20, 30, 10, 20])))).toEqual([0, 3, 1, 4, 2]);
  });
});
