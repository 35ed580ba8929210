/**
 * `WindowIndex.at`: the window of a process holding a time ([start, end)), as the gaps, the memory
 * traffic and the collectives place their events. It walks forward from its last answer for the
 * same process and keeps that process's windows at hand: interleaved processes, times going back
 * and processes without windows must still give the plain search's answer.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WindowIndex, type TimeWindow } from '../../src/iterations/windowIndex.js';

/** The definition: the window of `pid` with the latest start at or before `t`, if `t` is before its end. */
function atByDefinition(refs: readonly TimeWindow[], pid: number, t: number): number {
  let best = -1;
  refs.forEach((r, i) => {
    if (r.pid === pid && r.startNs <= t && (best < 0 || r.startNs > refs[best].startNs)) best = i;
  });
  return best >= 0 && t < refs[best].endNs ? best : -1;
}

describe('WindowIndex.at', () => {
  it('equals the definition for queries in any order over several processes, one without windows (fast-check)', () => {
    // Per process, back-to-back windows with holes (an iteration's window ends where the next starts, or earlier).
    const arbWindows = fc.array(fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 20 }), fc.integer({ min: 0, max: 5 })), { maxLength: 20 });
    fc.assert(
      fc.property(arbWindows, fc.array(fc.tuple(fc.integer({ min: 1, max: 4 }), fc.integer({ min: -5, max: 400 })), { maxLength: 40 }), fc.boolean(), (spec, queries, sorted) => {
        const next = new Map<number, number>();
        const refs: TimeWindow[] = spec.map(([pid, len, hole]) => {
          const start = (next.get(pid) ?? 0) + hole;
          next.set(pid, start + len);
          return { pid, startNs: start, endNs: start + len - (hole % 2) };
        });
        const ix = new WindowIndex(refs);
        const qs = sorted ? [...queries].sort((a, b) => a[1] - b[1]) : queries;
        for (const [pid, t] of qs) expect(ix.at(pid, t), `${pid}@${t}`).toBe(atByDefinition(refs, pid, t));
      }),
      { numRuns: 500 },
    );
  });
});
