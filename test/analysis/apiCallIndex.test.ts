import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiCallIndex, firstAtLeast } from '../../src/load/apiCallIndex.js';
import { loadApiCallColumns, type ApiCallColumns } from '../../src/load/apiCallColumns.js';
import { withExport } from '../../src/export/openExport.js';
import { fixture } from '../helpers/fixtures.js';

/** Calls from (pid, correlationId | null) pairs in row order. */
function columns(rows: [number, number | null][]): ApiCallColumns {
  const n = rows.length;
  return {
    count: n,
    pid: Int32Array.from(rows, (r) => r[0]),
    tid: Int32Array.from(rows, (r) => r[0]),
    correlationId: Float64Array.from(rows, (r) => r[1] ?? NaN),
    start: Float64Array.from(rows, (_, i) => i * 10),
    end: Float64Array.from(rows, (_, i) => i * 10 + 5),
    nameId: new Int32Array(n).fill(-1),
    maxEndNs: n ? (n - 1) * 10 + 5 : 0,
    backtraceRows: 0,
    invalidRows: 0,
  };
}

/** The reference: first row of each (pid, correlationId). */
function naive(rows: [number, number | null][], pid: number, corr: number): number {
  return rows.findIndex((r) => r[0] === pid && r[1] === corr);
}

describe('firstAtLeast: search outward from a finger (fast-check)', () => {
  it('equals a plain lower bound for every value and start', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 60 }), { maxLength: 80 }).map((a) => Float64Array.from(a).sort()),
        fc.integer({ min: -2, max: 70 }),
        fc.nat({ max: 90 }),
        (a, v, from) => {
          let expected = a.findIndex((x) => x >= v);
          if (expected < 0) expected = a.length;
          expect(firstAtLeast(a, v, from)).toBe(expected);
        },
      ),
    );
  });
});

describe('ApiCallIndex: (pid, correlationId) -> first call row', () => {
  const arbRows = fc.array(fc.tuple(fc.constantFrom(7, 9), fc.option(fc.integer({ min: 1, max: 40 }), { nil: null })), { maxLength: 60 });

  it('ascending ids (one process, several, with duplicates) and shuffled ids all agree with a scan', () => {
    fc.assert(
      fc.property(arbRows, fc.boolean(), fc.array(fc.tuple(fc.constantFrom(7, 9, 11), fc.integer({ min: 0, max: 45 })), { maxLength: 40 }), (raw, sortIds, queries) => {
        // Ascending per process when sortIds (the nsys layout), any order otherwise.
        const rows = sortIds ? raw.map((r, i) => [r[0], r[1] == null ? null : Math.floor(i / 2)] as [number, number | null]) : raw;
        const ix = new ApiCallIndex(columns(rows));
        for (const [pid, corr] of [...queries, ...rows.filter((r) => r[1] != null).map((r) => [r[0], r[1]!] as [number, number])]) {
          expect(ix.lookup(pid, corr)).toBe(naive(rows, pid, corr));
        }
        expect(ix.lookup(7, NaN)).toBe(-1);
      }),
    );
  });

  it('sparse out-of-order ids use the Map fallback and still find the first row', () => {
    const rows: [number, number | null][] = [
      [1, 5_000_000],
      [1, 3],
      [1, 9_000_000],
      [1, 3],
    ];
    const ix = new ApiCallIndex(columns(rows));
    expect(ix.lookup(1, 3)).toBe(1);
    expect(ix.lookup(1, 9_000_000)).toBe(2);
    expect(ix.lookup(1, 4)).toBe(-1);
  });

  it('pytorch-tp2 rank 0: every call is found at its own row (ids ascend in row order)', () => {
    withExport(fixture('pytorch-tp2/trace.rank0.sqlite'), (h) => {
      const calls = loadApiCallColumns(h);
      const ix = new ApiCallIndex(calls);
      expect(calls.count).toBe(52178);
      let found = 0;
      for (let i = 0; i < calls.count; i++) if (ix.lookup(calls.pid[i], calls.correlationId[i]) === i) found++;
      expect(found).toBe(calls.count);
      expect(ix.lookup(calls.pid[0], 18942)).toBe(-1);
      expect(ix.lookup(calls.pid[0] + 1, calls.correlationId[0])).toBe(-1);
    });
  });
});
