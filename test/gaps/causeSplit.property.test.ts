/**
 * `splitGapCauses` against an independent oracle: cut the gap at every boundary any cause has,
 * and give each elementary piece to the highest-priority cause covering it (gc > gil_wait > sync >
 * launch_late > the NVTX segments in order > unattributed).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { unionIntervals, type IntervalSet } from '../../src/math/intervals.js';
import { NVTX_CAUSE_PREFIX, primaryCause, splitGapCauses, type NamedSegments } from '../../src/gaps/attributeCauses.js';
import { sortCauses } from '../../src/gaps/analyzeGaps.js';

const arbSet = fc.array(fc.tuple(fc.integer({ min: -50, max: 250 }), fc.integer({ min: 0, max: 60 })), { maxLength: 6 }).map((ps): IntervalSet =>
  unionIntervals(
    ps.map((p) => p[0]),
    ps.map((p) => p[0] + p[1]),
  ),
);
/** Sorted, disjoint NVTX segments with names from a small set (repeats merge into one cause). */
const arbSegments = fc.array(fc.tuple(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 1, max: 30 }), fc.constantFrom('a', 'b', 'c')), { maxLength: 6 }).map((ps): NamedSegments => {
  const out: NamedSegments = { starts: [], ends: [], names: [] };
  let t = -20;
  for (const [gap, len, name] of ps) {
    t += gap;
    out.starts.push(t);
    out.ends.push(t + len);
    out.names.push(name);
    t += len;
  }
  return out;
});

function oracle(s: number, e: number, covers: { cause: string; set: IntervalSet }[]): Record<string, number> {
  const cuts = new Set<number>([s, e]);
  for (const c of covers) for (let i = 0; i < c.set.starts.length; i++) cuts.add(c.set.starts[i]).add(c.set.ends[i]);
  const points = [...cuts].filter((x) => x >= s && x <= e).sort((a, b) => a - b);
  const out: Record<string, number> = {};
  for (let k = 0; k + 1 < points.length; k++) {
    const [a, b] = [points[k], points[k + 1]];
    const inside = (set: IntervalSet) => Array.from(set.starts).some((x, i) => x <= a && set.ends[i] >= b);
    const cause = covers.find((c) => inside(c.set))?.cause ?? 'unattributed';
    out[cause] = (out[cause] ?? 0) + (b - a);
  }
  return out;
}

const one = (a: number, b: number): IntervalSet => ({ starts: Float64Array.of(a), ends: Float64Array.of(b) });

describe('splitGapCauses (property: equals the elementary-piece oracle)', () => {
  it('splits every gap exactly as the oracle does', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 1, max: 150 }), arbSet, arbSet, arbSet, fc.option(fc.integer({ min: -10, max: 260 })), arbSegments, (s, len, gc, gil, sync, api, nvtx) => {
        const e = s + len;
        const covers = [
          { cause: 'gc', set: gc },
          { cause: 'gil_wait', set: gil },
          { cause: 'sync', set: sync },
          ...(api != null && api > s && api < e ? [{ cause: 'launch_late', set: one(api, e) }] : []),
          ...nvtx.starts.map((x, i) => ({ cause: NVTX_CAUSE_PREFIX + nvtx.names[i], set: one(x, nvtx.ends[i]) })),
        ];
        const got = splitGapCauses({ startNs: s, endNs: e, gc, gilWait: gil, sync, launchApiStartNs: api, nvtx });
        const want = oracle(s, e, covers);
        expect(got.causes).toEqual(want);
        expect(Object.values(got.causes).reduce((a, b) => a + b, 0)).toBe(len);
        // Keys in output order (priority, larger first, name) and the primary cause as the record gives it.
        expect(Object.keys(got.causes)).toEqual(Object.keys(sortCauses(want)));
        expect(got.cause).toBe(primaryCause(want));
      }),
      { numRuns: 500 },
    );
  });
});
