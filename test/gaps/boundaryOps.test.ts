/**
 * The ops on either side of a gap (`resolveBoundaryOps`): the op ending exactly at the gap's start
 * and the one starting exactly at its end, on the gap's device, with a length; the first in scan
 * order when several. Found by binary search run by run for a few gaps over ops in few ascending
 * runs (each table in time order), by one scan otherwise: both must give the definition's answer.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { resolveBoundaryOps } from '../../src/gaps/findGaps.js';
import { computeDeviceTimelines, gapCount } from '../../src/load/deviceTimelines.js';
import { loadGpuOpColumns, type GpuOpColumns } from '../../src/load/gpuOpColumns.js';
import { busyEndAt, busyStartAt } from '../../src/math/busyIntervals.js';
import { fixture } from '../helpers/fixtures.js';

/** The definition, by time: the lowest index on `deviceId` with a length whose `times` value is that time. */
function firstByDefinition(ops: GpuOpColumns, deviceId: number, times: Float64Array): Map<number, number> {
  const first = new Map<number, number>();
  for (let i = 0; i < ops.count; i++) if (ops.deviceId[i] === deviceId && ops.end[i] > ops.start[i] && !first.has(times[i])) first.set(times[i], i);
  return first;
}

function expectDefinition(ops: GpuOpColumns, deviceId: number, starts: number[], ends: number[]): void {
  const { before, after } = resolveBoundaryOps(ops, deviceId, starts, ends);
  const byEnd = firstByDefinition(ops, deviceId, ops.end);
  const byStart = firstByDefinition(ops, deviceId, ops.start);
  expect(Array.from(before)).toEqual(starts.map((t) => byEnd.get(t) ?? -1));
  expect(Array.from(after)).toEqual(ends.map((t) => byStart.get(t) ?? -1));
}

/** Ops from (start, length, device) triples in scan order. */
function opsOf(rows: [number, number, number][]): GpuOpColumns {
  const n = rows.length;
  return {
    count: n,
    start: Float64Array.from(rows, (r) => r[0]),
    end: Float64Array.from(rows, (r) => r[0] + r[1]),
    deviceId: Int32Array.from(rows, (r) => r[2]),
    streamId: new Int32Array(n),
    pid: new Int32Array(n).fill(7),
    correlationId: Float64Array.from(rows, (_, i) => i),
    kind: new Uint8Array(n),
    nameId: new Int32Array(n).fill(-1),
  };
}

describe('the ops either side of a gap', () => {
  it('pytorch-dense and pytorch-tp2 rank 0: every long gap of the real timelines (searched), and every gap (scanned)', () => {
    for (const file of [fixture('pytorch-dense', 'trace.sqlite'), fixture('pytorch-tp2', 'trace.rank0.sqlite')]) {
      withExport(file, (h) => {
        const ops = loadGpuOpColumns(h);
        for (const t of computeDeviceTimelines(ops)) {
          const n = gapCount(t);
          const all = Array.from({ length: n }, (_, i) => i);
          const long = all.filter((i) => busyStartAt(t.busy, i + 1) - busyEndAt(t.busy, i) >= 100_000);
          expect(long.length).toBeGreaterThan(0);
          for (const gaps of [long, all]) {
            const starts = gaps.map((i) => busyEndAt(t.busy, i));
            const ends = gaps.map((i) => busyStartAt(t.busy, i + 1));
            expectDefinition(ops, t.deviceId, starts, ends);
            // A real gap always has both: the busy time's bounds are op times.
            const { before, after } = resolveBoundaryOps(ops, t.deviceId, starts, ends);
            expect(before.every((i) => i >= 0) && after.every((i) => i >= 0)).toBe(true);
          }
        }
      });
    }
  });

  it('equals the definition over runs of ops (two devices, equal times, empty ops), few or many, asked for few times or many (fast-check)', () => {
    const arbRun = fc.array(fc.tuple(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 1 })), { maxLength: 40 }).map((r) => r.sort((a, b) => a[0] - b[0]));
    fc.assert(
      fc.property(fc.array(arbRun, { minLength: 1, maxLength: 10 }), fc.array(fc.integer({ min: 0, max: 66 }), { maxLength: 12 }), fc.integer({ min: 0, max: 1 }), (runs, times, deviceId) => {
        const ops = opsOf(runs.flat());
        expectDefinition(ops, deviceId, times, times);
      }),
      { numRuns: 500 },
    );
  });
});
