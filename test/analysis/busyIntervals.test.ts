/**
 * The busy union packed in 8 bytes an interval (`BusyIntervals`: per block of 256 intervals a base,
 * per interval its start's Uint32 offset and its Uint32 length, far starts kept whole) answers as
 * the union with its starts and ends (`unionIntervals`): the same starts and ends, covered length
 * and overlap with any window, on random intervals (fast-check, with lengths and idle times past
 * 2^32 and sets past one block among them) and on pytorch-dense's GPU ops.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { busyEndAt, busyIntervalsOf, busyLength, busyOverlap, busyStartAt, busyUnionOf, busyUnionOverOps } from '../../src/math/busyIntervals.js';
import { coveredLength, overlapLength, unionIntervals } from '../../src/math/intervals.js';
import { withExport } from '../../src/export/openExport.js';
import { LoadedExport } from '../../src/load/loadedExport.js';
import { fixture } from '../helpers/fixtures.js';

const endsOf = (b: ReturnType<typeof busyUnionOf>) => Array.from({ length: b.count }, (_, i) => busyEndAt(b, i));
const startsOf = (b: ReturnType<typeof busyUnionOf>) => Array.from({ length: b.count }, (_, i) => busyStartAt(b, i));

describe('BusyIntervals against unionIntervals (fast-check)', () => {
  const interval = (maxLength: number, maxStart = 10_000_000) => fc.tuple(fc.integer({ min: 0, max: maxStart }), fc.integer({ min: 0, max: maxLength })).map(([s, len]) => [s, s + len] as const);
  const sets = fc.oneof(
    fc.array(interval(5_000), { minLength: 0, maxLength: 60 }),
    fc.array(interval(2 ** 33), { minLength: 1, maxLength: 20 }),
    // Past one block of 256, with idle times past 2^32 among short ones: starts far from their block's base.
    fc.array(interval(3_000, 2 ** 40), { minLength: 200, maxLength: 700 }),
    fc.array(fc.oneof(interval(3_000), interval(3_000, 2 ** 36)), { minLength: 250, maxLength: 600 }),
  );
  const window = fc.tuple(fc.integer({ min: -1000, max: 2 ** 34 }), fc.integer({ min: 0, max: 2 ** 34 }));

  it('the same starts and ends, covered length and overlaps; packed exactly when every length fits and few starts are far', () => {
    fc.assert(
      fc.property(sets, fc.array(window, { maxLength: 8 }), (ivs, windows) => {
        const starts = ivs.map((x) => x[0]);
        const ends = ivs.map((x) => x[1]);
        const set = unionIntervals(starts, ends);
        const busy = busyUnionOf(starts, ends);
        expect(startsOf(busy)).toEqual(Array.from(set.starts));
        expect(endsOf(busy)).toEqual(Array.from(set.ends));
        const fits = Array.from(set.starts).every((s, i) => set.ends[i] - s < 2 ** 32);
        if (!fits) expect(busy.packed).toBeNull();
        if (busy.packed !== null) {
          expect(busy.packed.length).toBe(2 * busy.count);
          expect(busy.farStarts!.size * 64).toBeLessThanOrEqual(busy.count);
        }
        expect(busyLength(busy)).toBe(coveredLength(set));
        for (const [a, len] of windows) expect(busyOverlap(busy, a, a + len)).toBe(overlapLength(set, a, a + len));
        // Packed from a set it is given, the set is left as it was.
        const copy = { starts: set.starts.slice(), ends: set.ends.slice() };
        const again = busyIntervalsOf(copy);
        expect(Array.from(copy.ends)).toEqual(Array.from(set.ends));
        expect(endsOf(again)).toEqual(Array.from(set.ends));
      }),
    );
  });

  // GPU ops come table by table, each in start order: the union is packed as the sweep gives it
  // (no Float64 copy of it), to the same form `busyIntervalsOf` gives the swept set.
  const ascendingRun = (maxLength: number, maxStart: number) =>
    fc.array(interval(maxLength, maxStart), { minLength: 0, maxLength: 400 }).map((xs) => [...xs].sort((a, b) => a[0] - b[0]));
  const runsOf = fc.oneof(
    fc.array(ascendingRun(5_000, 10_000_000), { minLength: 1, maxLength: 4 }),
    fc.array(ascendingRun(3_000, 2 ** 40), { minLength: 1, maxLength: 3 }),
    fc.array(fc.oneof(ascendingRun(3_000, 2 ** 34), ascendingRun(2 ** 33, 2 ** 34)), { minLength: 1, maxLength: 3 }),
  );
  const formOf = (b: ReturnType<typeof busyUnionOf>) =>
    b.opOf !== null
      ? { count: b.count, opOf: Array.from(b.opOf), merged: [...b.mergedEnds!] }
      : b.packed === null
      ? { count: b.count, starts: Array.from(b.starts!), ends: Array.from(b.ends!) }
      : { count: b.count, packed: Array.from(b.packed), bases: Array.from(b.bases!), far: [...b.farStarts!] };

  it('in a few runs of ascending starts: packed as it is swept, to the form of the swept set packed', () => {
    fc.assert(
      fc.property(runsOf, (runs) => {
        const ivs = runs.flat();
        const starts = ivs.map((x) => x[0]);
        const ends = ivs.map((x) => x[1]);
        const busy = busyUnionOf(starts, ends);
        expect(formOf(busy)).toEqual(formOf(busyIntervalsOf(unionIntervals(starts, ends))));
      }),
      { numRuns: 300 },
    );
  });

  it('over the ops, in a few runs of ascending starts: the same starts, ends, length and overlaps, in 4 bytes an interval', () => {
    fc.assert(
      fc.property(runsOf, fc.array(window, { maxLength: 6 }), (runs, windows) => {
        const ivs = runs.flat();
        const starts = Float64Array.from(ivs, (x) => x[0]);
        const ends = Float64Array.from(ivs, (x) => x[1]);
        const set = unionIntervals(starts, ends);
        const busy = busyUnionOverOps(starts, ends);
        expect(startsOf(busy)).toEqual(Array.from(set.starts));
        expect(endsOf(busy)).toEqual(Array.from(set.ends));
        expect(busyLength(busy)).toBe(coveredLength(set));
        for (const [a, len] of windows) expect(busyOverlap(busy, a, a + len)).toBe(overlapLength(set, a, a + len));
        if (busy.opOf === null) {
          // Packed or wide only when more than one interval in 64 ends past its own op.
          expect(formOf(busy)).toEqual(formOf(busyUnionOf(starts, ends)));
          return;
        }
        expect([busy.opStarts, busy.opEnds]).toEqual([starts, ends]);
        expect(busy.mergedEnds!.size * 64).toBeLessThanOrEqual(busy.count);
        for (let i = 0; i < busy.count; i++) {
          const op = busy.opOf[i] & 0x7fffffff;
          expect(starts[op]).toBe(set.starts[i]);
          expect(busy.mergedEnds!.has(i)).toBe(ends[op] !== set.ends[i]);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('over the ops: one interval in 64 ending past its op stays over the ops, one more is packed', () => {
    // 640 ops of 5 ns, 10 apart; op 20k + 1 (k < merges) starts inside op 20k and ends after it.
    const withMerges = (merges: number) => {
      const starts = Array.from({ length: 640 }, (_, i) => i * 10);
      const ends = starts.map((s) => s + 5);
      for (let k = 0; k < merges; k++) [starts[20 * k + 1], ends[20 * k + 1]] = [20 * k * 10 + 2, 20 * k * 10 + 8];
      const order = starts.map((s, i) => i).sort((a, b) => starts[a] - starts[b]);
      return { starts: Float64Array.from(order, (i) => starts[i]), ends: Float64Array.from(order, (i) => ends[i]) };
    };
    for (const [merges, overOps] of [[9, true], [10, false]] as const) {
      const { starts, ends } = withMerges(merges);
      const busy = busyUnionOverOps(starts, ends);
      const set = unionIntervals(starts, ends);
      expect([busy.count, merges, busy.opOf !== null]).toEqual([640 - merges, merges, overOps]);
      if (busy.opOf) expect([...busy.mergedEnds!.values()]).toEqual(Array.from({ length: merges }, (_, k) => 20 * k * 10 + 8));
      expect(endsOf(busy)).toEqual(Array.from(set.ends));
      expect(startsOf(busy)).toEqual(Array.from(set.starts));
    }
  });

  it('a length past 2^32 after 300 packed intervals: the wide form from there, every interval kept', () => {
    const starts = Array.from({ length: 600 }, (_, i) => i * 100);
    const ends = starts.map((s, i) => (i === 300 ? s + 2 ** 33 : s + 50));
    const tail = starts.map((s) => s + 2 ** 34);
    const busy = busyUnionOf([...starts, ...tail], [...ends, ...tail.map((s) => s + 7.5)]);
    const set = unionIntervals([...starts, ...tail], [...ends, ...tail.map((s) => s + 7.5)]);
    expect(busy.packed).toBeNull();
    expect(busy.count).toBe(set.starts.length);
    expect([Array.from(busy.starts!), Array.from(busy.ends!)]).toEqual([Array.from(set.starts), Array.from(set.ends)]);
  });

  it("an idle time past 2^32 ns near a block's end: the starts after it in that block kept whole, the rest packed", () => {
    const starts = Array.from({ length: 1024 }, (_, i) => (i < 250 ? i * 10 : 2 ** 33 + i * 10));
    const busy = busyUnionOf(starts, starts.map((s) => s + 5));
    expect(busy.packed).toBeInstanceOf(Uint32Array);
    expect([...busy.farStarts!.keys()]).toEqual([250, 251, 252, 253, 254, 255]);
    expect(startsOf(busy)).toEqual(starts);
    expect(endsOf(busy)).toEqual(starts.map((s) => s + 5));
  });

  it('one start in 64 far is packed, one more is wide (1024 intervals: 16 and 17 far starts)', () => {
    const withFar = (far: number) => Array.from({ length: 1024 }, (_, i) => (i < 256 - far ? i * 10 : 2 ** 33 + i * 10));
    for (const [far, packed] of [[16, true], [17, false]] as const) {
      const starts = withFar(far);
      const busy = busyUnionOf(starts, starts.map((s) => s + 5));
      expect([far, busy.packed !== null]).toEqual([far, packed]);
      if (busy.packed) expect(busy.farStarts!.size).toBe(16);
      expect(startsOf(busy)).toEqual(starts);
    }
  });

  it('more than one start in 64 far from its base: the wide form, the same starts and ends', () => {
    const starts = Array.from({ length: 300 }, (_, i) => (i < 100 ? i * 10 : 2 ** 33 + i * 10));
    const busy = busyUnionOf(starts, starts.map((s) => s + 5));
    expect(busy.packed).toBeNull();
    expect(startsOf(busy)).toEqual(starts);
    expect(endsOf(busy)).toEqual(starts.map((s) => s + 5));
  });

  it('a length with a fraction keeps the ends', () => {
    const busy = busyIntervalsOf({ starts: Float64Array.of(0, 10), ends: Float64Array.of(5.5, 12) });
    expect(busy.packed).toBeNull();
    expect(endsOf(busy)).toEqual([5.5, 12]);
  });
});

describe('pytorch-dense: the busy union of its GPU ops', () => {
  it('over the op columns, with the starts, ends and busy time of the union with ends', () => {
    withExport(fixture('pytorch-dense', 'trace.sqlite'), (h) => {
      const loaded = new LoadedExport(h);
      const ops = loaded.gpuOps();
      const busy = loaded.busyUnion();
      const set = unionIntervals(ops.start, ops.end);
      expect(busy.opOf).toBeInstanceOf(Uint32Array);
      expect(busy.opStarts).toBe(ops.start);
      expect(busy.opEnds).toBe(ops.end);
      expect([busy.packed, busy.starts, busy.ends]).toEqual([null, null, null]);
      expect(busy.mergedEnds!.size * 64).toBeLessThan(busy.count);
      expect(busy.count).toBeGreaterThan(1000);
      expect(startsOf(busy)).toEqual(Array.from(set.starts));
      expect(endsOf(busy)).toEqual(Array.from(set.ends));
      expect(busyLength(busy)).toBe(coveredLength(set));
      expect(loaded.deviceTimelines()[0].busyNs).toBe(coveredLength(set));
    });
  });
});
