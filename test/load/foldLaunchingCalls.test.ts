/**
 * The read worker's launches read ops first (`foldLaunchingCalls`) are the whole fold's calls that
 * launched GPU work (`keepCallsWithGpuWork(foldOpsIntoCalls(..))`): the same calls, threads, times,
 * folded ops, shared keys and counts, on random sources (fast-check) with keys carried by several
 * calls with and without ops, ops with no key or no call, correlation ids past the bit sets' bound
 * or with a fraction, and several processes; and on pytorch-dense by its queries. (Every fixture
 * export through the worker: readInBackground.test.ts.)
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { foldLaunchingCalls, foldOpsIntoCalls, keepCallsWithGpuWork, type LaunchSource } from '../../src/load/launchedCalls.js';
import { withExport } from '../../src/export/openExport.js';
import { LoadedExport } from '../../src/load/loadedExport.js';
import { queriedLaunchedCalls, queriedLaunchingCalls } from '../../src/load/projectionReads.js';
import { fixture } from '../helpers/fixtures.js';
import { plainLaunchedCalls } from '../helpers/launchedCalls.js';

type Call = [hi: number, lo: number, start: number, end: number, corr: number];
type Op = [hi: number | null, corr: number | null, start: number, end: number];

const sourceOf = (calls: readonly Call[], ops: readonly Op[], callCapacity = calls.length): LaunchSource => ({
  callCapacity,
  eachCall: (fn) => calls.forEach((c) => fn(...c)),
  eachOp: (fn) => ops.forEach((o) => fn(...o)),
});

const plain = plainLaunchedCalls;

describe('foldLaunchingCalls against the whole fold kept to its calls with GPU work', () => {
  const his = fc.constantFrom(0, 1, -3, 2 ** 33);
  const corrs = fc.oneof(fc.integer({ min: 0, max: 40 }), fc.constantFrom(2 ** 40, 1.5, 9_000_000));
  const time = fc.integer({ min: 0, max: 1_000_000 });
  const call = fc.tuple(his, fc.integer({ min: 1, max: 4 }), time, time, corrs).map(([h, l, s, d, c]): Call => [h, l, s, s + d, c]);
  const op = fc
    .tuple(fc.option(his, { freq: 8 }), fc.option(corrs, { freq: 8 }), time, time)
    .map(([h, c, s, d]): Op => [h, c, s, s + d]);

  it('the same kept calls, folds, shared keys and counts (fast-check)', () => {
    fc.assert(
      fc.property(fc.array(call, { maxLength: 80 }), fc.array(op, { maxLength: 120 }), (calls, ops) => {
        const src = sourceOf(calls, ops);
        expect(plain(foldLaunchingCalls(src))).toEqual(plain(keepCallsWithGpuWork(foldOpsIntoCalls(src))));
      }),
      { numRuns: 400 },
    );
  });

  it('keys carried twice by calls without ops count as the whole fold counts them, past 2^20 correlation ids too', () => {
    const calls: Call[] = [
      [0, 1, 0, 5, 7],
      [0, 2, 10, 15, 7],
      [0, 1, 20, 25, 3_000_000],
      [0, 1, 30, 35, 3_000_000],
      [0, 1, 40, 45, 3_000_000],
      [0, 1, 50, 55, 11],
      [0, 1, 60, 65, 11],
    ];
    // Key 11 launched an op: a shared key among the kept calls; keys 7 and 3,000,000 launched none.
    const src = sourceOf(calls, [[0, 11, 100, 200], [0, 99, 300, 400], [null, 11, 500, 600]], 2);
    const kept = foldLaunchingCalls(src);
    expect(kept.duplicateCorrelationIds).toBe(3);
    expect([kept.count, [...kept.sharedKey], [...kept.keyOf]]).toEqual([2, [1, 1], [[0, 0], [1, 0]]]);
    expect([kept.gpuOps, kept.gpuOpsWithoutApiCall]).toEqual([3, 2]);
    expect(plain(kept)).toEqual(plain(keepCallsWithGpuWork(foldOpsIntoCalls(src))));
  });
});

describe('pytorch-dense by its queries', () => {
  it("the calls that launched GPU work, as the whole fold's, with its threads and counts", () => {
    withExport(fixture('pytorch-dense', 'trace.sqlite'), (h) => {
      const whole = queriedLaunchedCalls(new LoadedExport(h));
      const kept = queriedLaunchingCalls(new LoadedExport(h));
      expect(kept.count).toBeGreaterThan(1000);
      expect(kept.count).toBeLessThan(whole.count);
      expect(plain(kept)).toEqual(plain(keepCallsWithGpuWork(whole)));
    });
  });
});
