/**
 * The busy union held as starts and lengths (`BusyIntervals`) answers as the union with its ends
 * (`unionIntervals`): the same ends, covered length and overlap with any window, on random
 * intervals (fast-check, with lengths past 2^32 among them) and on pytorch-dense's GPU ops.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { busyEndAt, busyIntervalsOf, busyLength, busyOverlap, busyUnionOf } from '../../src/math/busyIntervals.js';
import { coveredLength, overlapLength, unionIntervals } from '../../src/math/intervals.js';
import { withExport } from '../../src/export/openExport.js';
import { LoadedExport } from '../../src/load/loadedExport.js';
import { fixture } from '../helpers/fixtures.js';

const endsOf = (b: ReturnType<typeof busyUnionOf>) => Array.from({ length: b.count }, (_, i) => busyEndAt(b, i));

describe('BusyIntervals against unionIntervals (fast-check)', () => {
  const interval = (maxLength: number) => fc.tuple(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 0, max: maxLength })).map(([s, len]) => [s, s + len] as const);
  const sets = fc.oneof(fc.array(interval(5_000), { minLength: 0, maxLength: 60 }), fc.array(interval(2 ** 33), { minLength: 1, maxLength: 20 }));
  const window = fc.tuple(fc.integer({ min: -1000, max: 2 ** 34 }), fc.integer({ min: 0, max: 2 ** 34 }));

  it('the same starts and ends, covered length and overlaps; lengths in 4 bytes exactly when each fits', () => {
    fc.assert(
      fc.property(sets, fc.array(window, { maxLength: 8 }), (ivs, windows) => {
        const starts = ivs.map((x) => x[0]);
        const ends = ivs.map((x) => x[1]);
        const set = unionIntervals(starts, ends);
        const busy = busyUnionOf(starts, ends);
        expect(Array.from(busy.starts)).toEqual(Array.from(set.starts));
        expect(endsOf(busy)).toEqual(Array.from(set.ends));
        const fits = Array.from(set.starts).every((s, i) => set.ends[i] - s < 2 ** 32);
        expect(busy.lengths !== null).toBe(fits);
        expect(busyLength(busy)).toBe(coveredLength(set));
        for (const [a, len] of windows) expect(busyOverlap(busy, a, a + len)).toBe(overlapLength(set, a, a + len));
      }),
    );
  });

  it('a length with a fraction keeps the ends', () => {
    const busy = busyIntervalsOf({ starts: Float64Array.of(0, 10), ends: Float64Array.of(5.5, 12) });
    expect(busy.lengths).toBeNull();
    expect(endsOf(busy)).toEqual([5.5, 12]);
  });
});

describe('pytorch-dense: the busy union of its GPU ops', () => {
  it('held as Uint32 lengths, with the ends and busy time of the union with ends', () => {
    withExport(fixture('pytorch-dense', 'trace.sqlite'), (h) => {
      const loaded = new LoadedExport(h);
      const ops = loaded.gpuOps();
      const busy = loaded.busyUnion();
      const set = unionIntervals(ops.start, ops.end);
      expect(busy.lengths).toBeInstanceOf(Uint32Array);
      expect(busy.ends).toBeNull();
      expect(busy.count).toBeGreaterThan(1000);
      expect(endsOf(busy)).toEqual(Array.from(set.ends));
      expect(busyLength(busy)).toBe(coveredLength(set));
      expect(loaded.deviceTimelines()[0].busyNs).toBe(coveredLength(set));
    });
  });
});
