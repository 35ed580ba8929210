import { describe, expect, it } from 'vitest';
import { MIN_SAMPLES, SKETCH_POINTS, relativeInterval, sketchMean, sketchMedian, sketchOf, totalRatioInterval, verdictOf, type Sketch } from '../../src/math/sketch.js';

/** A deterministic right-skewed sample (log-normal-like) around `scale`. */
function skewed(n: number, scale: number, seed = 1): number[] {
  let s = seed;
  const u = () => ((s = (s * 1103515245 + 12345) % 2147483648) + 0.5) / 2147483648;
  return Array.from({ length: n }, () => Math.round(scale * Math.exp(0.3 * Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u()))));
}

/** The verdict at a 5% threshold; the absolute change is the interval's middle times the base mean. */
const gate = (b: Sketch, h: Sketch, interval: { lo: number; hi: number } | null, floor = 0) =>
  verdictOf({ base: b, head: h, interval, threshold: 0.05, floor, floorDelta: interval ? ((interval.lo + interval.hi) / 2) * sketchMean(b) : 0, floorBase: sketchMean(b) });

describe('sketch', () => {
  it('keeps small samples whole, and the exact count, sum and median', () => {
    const s = sketchOf([5, 1, 3, 2, 4]);
    expect(s).toEqual({ n: 5, sum: 15, points: [1, 2, 3, 4, 5] });
    expect(sketchMedian(s)).toBe(3);
  });

  it('bounds a large sample to SKETCH_POINTS order statistics within 1/(2*SKETCH_POINTS) of rank', () => {
    const xs = Array.from({ length: 10_000 }, (_, i) => i);
    const s = sketchOf(xs);
    expect(s.points.length).toBe(SKETCH_POINTS);
    expect(s.n).toBe(10_000);
    expect(s.sum).toBe((9_999 * 10_000) / 2);
    // Point i is the sample at rank (i + 0.5) / K: each within n / (2K) of its bin's middle.
    s.points.forEach((p, i) => expect(Math.abs(p - ((i + 0.5) * 10_000) / SKETCH_POINTS)).toBeLessThanOrEqual(1));
    expect(Math.abs(sketchMedian(s) - 4_999.5)).toBeLessThanOrEqual(10_000 / (2 * SKETCH_POINTS));
  });
});

describe('relativeInterval (percentile bootstrap of the ratio of means)', () => {
  it('is deterministic: the same inputs give the same interval', () => {
    const b = sketchOf(skewed(60, 1e6, 1));
    const h = sketchOf(skewed(60, 1e6, 2));
    expect(relativeInterval(b, h, 'm')).toEqual(relativeInterval(b, h, 'm'));
  });

  it('covers no change for two draws of one distribution, and excludes zero for a 20% slowdown', () => {
    const b = sketchOf(skewed(80, 1e6, 1));
    const same = relativeInterval(b, sketchOf(skewed(80, 1e6, 7)), 'same')!;
    expect(same.lo).toBeLessThan(0);
    expect(same.hi).toBeGreaterThan(0);
    // The same draws 20% longer: the interval holds +20% and lies above the 5% threshold.
    const slow = relativeInterval(b, sketchOf(skewed(80, 1.2e6, 1)), 'slow')!;
    expect(slow.lo).toBeGreaterThan(0.05);
    expect(slow.lo).toBeLessThan(0.2);
    expect(slow.hi).toBeGreaterThan(0.2);
    expect(slow.hi).toBeLessThan(0.4);
  });

  it('scales a large sample\'s sketch to n samples: 20,000 samples give a narrower interval than 128', () => {
    const small = relativeInterval(sketchOf(skewed(128, 1e6, 1)), sketchOf(skewed(128, 1e6, 2)), 'k')!;
    const large = relativeInterval(sketchOf(skewed(20_000, 1e6, 1)), sketchOf(skewed(20_000, 1e6, 2)), 'k')!;
    expect(large.hi - large.lo).toBeLessThan((small.hi - small.lo) / 5);
    expect(large.lo).toBeLessThan(0.01);
    expect(large.hi).toBeGreaterThan(-0.01);
  });

  it('is null when the base mean is 0', () => {
    expect(relativeInterval(sketchOf([0, 0, 0]), sketchOf([1, 2, 3]), 'z')).toBeNull();
  });
});

describe('totalRatioInterval (normal interval of the log ratio of totals)', () => {
  it('centres on the ratio and widens with the variance', () => {
    const i = totalRatioInterval(1000, 1100, 100, 100)!;
    expect(i.lo).toBeLessThan(0.1);
    expect(i.hi).toBeGreaterThan(0.1);
    expect(totalRatioInterval(1000, 1100, 0, 0)).toEqual({ lo: expect.closeTo(0.1, 12), hi: expect.closeTo(0.1, 12) });
    const wide = totalRatioInterval(1000, 1100, 10_000, 10_000)!;
    expect(wide.hi - wide.lo).toBeGreaterThan(i.hi - i.lo);
    expect(totalRatioInterval(0, 1, 1, 1)).toBeNull();
  });
});

describe('verdictOf', () => {
  const b = sketchOf(skewed(40, 1e6, 1));
  const h = sketchOf(skewed(40, 1e6, 3));
  it('regressed only when the whole interval lies beyond the threshold', () => {
    expect(gate(b, h, { lo: 0.06, hi: 0.2 }).verdict).toBe('regressed');
    expect(gate(b, h, { lo: 0.04, hi: 0.2 }).verdict).toBe('inconclusive');
    expect(gate(b, h, { lo: -0.2, hi: -0.06 }).verdict).toBe('improved');
    expect(gate(b, h, { lo: -0.04, hi: 0.049 }).verdict).toBe('unchanged');
  });

  it('names too few samples inconclusive, with the counts', () => {
    const few = sketchOf([1, 2, 3]);
    const v = gate(few, few, { lo: 0, hi: 0 });
    expect(v.verdict).toBe('inconclusive');
    expect(v.reason).toContain(`base 3, head 3; ${MIN_SAMPLES} a side at least`);
  });

  it('calls a change whose largest value allowed is under the floor unchanged', () => {
    const tiny = sketchOf(Array.from({ length: 20 }, () => 1000));
    expect(gate(tiny, tiny, { lo: 0.1, hi: 0.5 }, 10_000).verdict).toBe('unchanged');
  });
});
