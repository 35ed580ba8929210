/**
 * Issue 14, item 4 (memory grows ~130 B per NVTX row): a launching thread's NVTX ranges are held
 * in typed columns, sorted through a 4-byte index, and not copied at all when they arrive in
 * order. Measured on a copy of pytorch-tp2 rank 0 with 2M extra NVTX rows (docs/robustness.md);
 * here: the order and contents are those of the plain sort, and in-order input is not copied.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ThreadRanges } from '../../src/gaps/hostCauses.js';

/** The previous implementation: sort an index of plain arrays by (start asc, end desc, index). */
function reference(s: number[], e: number[], n: number[]) {
  const idx = s.map((_, i) => i).sort((a, b) => s[a] - s[b] || e[b] - e[a] || a - b);
  return { start: idx.map((i) => s[i]), end: idx.map((i) => e[i]), name: idx.map((i) => n[i]) };
}

describe('4. NVTX memory: ranges per thread in typed columns', () => {
  it('sorts like the plain-array version (start, then the longer first, then input order)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 5 })), { maxLength: 60 }), (rows) => {
        const s = rows.map((r) => r[0]);
        const e = rows.map((r) => r[0] + r[1]);
        const n = rows.map((r) => r[2]);
        const tr = new ThreadRanges(Float64Array.from(s), Float64Array.from(e), Int32Array.from(n));
        const ref = reference(s, e, n);
        expect([...tr.start]).toEqual(ref.start);
        expect([...tr.end]).toEqual(ref.end);
        expect([...tr.name]).toEqual(ref.name);
      }),
    );
  });

  it('keeps typed columns that are already in order without copying them', () => {
    const s = Float64Array.from([0, 10, 10, 30]);
    const e = Float64Array.from([100, 50, 20, 40]);
    const n = Int32Array.from([0, 1, 2, 3]);
    const tr = new ThreadRanges(s, e, n);
    expect(tr.start).toBe(s);
    expect(tr.end).toBe(e);
    expect(tr.name).toBe(n);
    expect(tr.overlapping(15, 35)).toEqual([0, 1, 2, 3]);
  });
});
