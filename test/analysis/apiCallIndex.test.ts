import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiCallIndex, firstAtLeast } from '../../src/load/apiCallIndex.js';
import { loadApiCallColumns, type ApiCallColumns } from '../../src/load/apiCallColumns.js';
import { loadGpuOpColumns } from '../../src/load/gpuOpColumns.js';
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
    end: { duration: new Uint32Array(n).fill(5), long: new Map() },
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

/** The flags `flagCalls` must give: a lookup per op. */
function flagsByLookup(ix: ApiCallIndex, pids: ArrayLike<number>, corrs: ArrayLike<number>, callCount: number): Uint8Array {
  const flags = new Uint8Array(callCount);
  for (let i = 0; i < pids.length; i++) {
    const ci = ix.lookup(pids[i], corrs[i]);
    if (ci >= 0) flags[ci] = 1;
  }
  return flags;
}

describe('ApiCallIndex.flagCalls: the rows the ops lead to, in bulk', () => {
  // Ops' ids: whole, fractional, NaN, out of range; pids: the calls' and others.
  const arbOps = fc.array(fc.tuple(fc.constantFrom(7, 9), fc.oneof(fc.integer({ min: -3, max: 45 }), fc.constantFrom(NaN, 2.5, 4.5, 1e12))), { maxLength: 60 });

  it('equals a lookup per op: one process in id order (the bitmap), several, duplicates, shuffled (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom(7, 9), fc.option(fc.integer({ min: 1, max: 40 }), { nil: null })), { maxLength: 60 }),
        fc.constantFrom('one process, ascending', 'ascending', 'any'),
        arbOps,
        (raw, layout, ops) => {
          const rows: [number, number | null][] =
            layout === 'any' ? raw : raw.map((r, i) => [layout === 'ascending' ? r[0] : 7, layout === 'ascending' && r[1] == null ? null : Math.floor(i / 2) + 3] as [number, number | null]);
          const ix = new ApiCallIndex(columns(rows));
          const pids = ops.map((o) => o[0]);
          const corrs = ops.map((o) => o[1]);
          expect(ix.flagCalls(pids, corrs, ops.length, rows.length)).toEqual(flagsByLookup(ix, pids, corrs, rows.length));
        },
      ),
    );
  });

  it('a range too wide for a bitmap, and fractional call ids, take the lookups (same flags)', () => {
    for (const [rows, expected] of [
      [
        [
          [1, 3],
          [1, 9_000_000_000],
        ],
        [1, 1],
      ],
      [
        [
          [1, 3.5],
          [1, 4],
        ],
        [1, 0],
      ],
    ] as [[number, number][], number[]][]) {
      const ix = new ApiCallIndex(columns(rows));
      const pids = [1, 1, 1];
      const corrs = [3, 9_000_000_000, 3.5];
      expect(ix.flagCalls(pids, corrs, 3, rows.length)).toEqual(flagsByLookup(ix, pids, corrs, rows.length));
      expect([...ix.flagCalls(pids, corrs, 3, rows.length)]).toEqual(expected);
    }
  });

  it('pytorch-dense: the GPU ops flag the same calls as a lookup each (the bitmap path: one process in id order)', () => {
    withExport(fixture('pytorch-dense/trace.sqlite'), (h) => {
      const calls = loadApiCallColumns(h);
      const ops = loadGpuOpColumns(h);
      const ix = new ApiCallIndex(calls);
      const flags = ix.flagCalls(ops.pid, ops.correlationId, ops.count, calls.count);
      expect(flags).toEqual(flagsByLookup(ix, ops.pid, ops.correlationId, calls.count));
      let launched = 0;
      for (const f of flags) launched += f;
      // Every op's launch call, each once: the ops with a runtime row, less those sharing a call (graph replays).
      expect(launched).toBeGreaterThan(0.25 * calls.count);
      expect(new Set(calls.pid).size).toBe(1);
    });
  });
});
