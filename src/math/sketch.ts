/**
 * The gate's statistics, pure and deterministic: a bounded sketch of a metric's samples (what a
 * baseline keeps), a confidence interval of the relative change of the mean between two sketches
 * (percentile bootstrap, fixed seed per metric), and the four verdicts.
 *
 * Why a bootstrap of the ratio of means, not a rank-based (Hodges-Lehmann) interval: the gate is
 * about GPU time spent, i.e. totals, i.e. means; a rank-based shift estimates the median, which a
 * regression in the slow tail (5% of iterations twice as long) does not move. The percentile
 * bootstrap assumes no distribution (GPU timings are right-skewed, multi-modal across batch
 * shapes, and often tied: kernels per step), copes with zeros (a category absent from some
 * iterations) where a log-scale rank method cannot, and its percentile interval of a ratio is the
 * same on the log scale (transformation-respecting), so skew does not bias it. Its known weakness,
 * too narrow an interval on few samples, is why fewer than MIN_SAMPLES per side is inconclusive.
 */

/** At most this many points per sketch. */
export const SKETCH_POINTS = 128;
/** Fewer samples than this on either side: inconclusive (a bootstrap on fewer undercovers). */
export const MIN_SAMPLES = 10;
/** Bootstrap resamples and the interval's confidence. */
export const RESAMPLES = 1000;
export const CONFIDENCE = 0.95;

/**
 * A metric's samples in bounded space: the count, the exact sum (the mean is exact), and the
 * samples themselves when at most SKETCH_POINTS, else SKETCH_POINTS order statistics at evenly
 * spaced ranks (the midpoints of SKETCH_POINTS equal-count bins). Each point is an exact sample
 * whose rank is off by at most n / (2 * SKETCH_POINTS): a quantile read from the sketch is within
 * 1 / 256 = 0.4% of rank of the true one. Points are sorted.
 */
export interface Sketch {
  n: number;
  sum: number;
  points: number[];
}

/** Rounds to `decimals` places (ns: 0; shares: 6): a baseline keeps no float noise. */
const rounded = (x: number, decimals: number) => {
  const f = 10 ** decimals;
  return Math.round(x * f) / f;
};

export function sketchOf(values: ArrayLike<number>, decimals = 0): Sketch {
  const sorted = Float64Array.from(values).sort();
  const n = sorted.length;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += sorted[i];
  const k = Math.min(n, SKETCH_POINTS);
  const points: number[] = new Array(k);
  for (let i = 0; i < k; i++) points[i] = rounded(sorted[n <= SKETCH_POINTS ? i : Math.floor(((i + 0.5) * n) / SKETCH_POINTS)], decimals);
  return { n, sum: rounded(sum, decimals), points };
}

export const sketchMean = (s: Sketch) => (s.n ? s.sum / s.n : 0);

/** The median of the sketch's points (exact while n <= SKETCH_POINTS). */
export function sketchMedian(s: Sketch): number {
  const p = s.points;
  if (!p.length) return 0;
  const m = p.length >> 1;
  return p.length % 2 ? p[m] : (p[m - 1] + p[m]) / 2;
}

/** FNV-1a of a string: each metric's bootstrap has its own seed, so adding a metric changes no other's interval. */
function seedOf(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32: small, fast, and the same sequence on every platform. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * One bootstrap mean of a sketch: the mean of its points resampled with replacement. A sketch of
 * more samples than points holds n samples' worth of information in fewer points: the resampled
 * mean's deviation from the points' mean is scaled by sqrt(points / n), the spread the mean of n
 * samples has (central limit), around the exact mean.
 */
function resampleMean(s: Sketch, pointsMean: number, next: () => number): number {
  const p = s.points;
  const k = p.length;
  let sum = 0;
  for (let i = 0; i < k; i++) sum += p[Math.floor(next() * k)];
  return sketchMean(s) + (sum / k - pointsMean) * Math.sqrt(k / Math.max(k, s.n));
}

/** Linear-interpolated quantile of sorted values. */
function quantile(sorted: Float64Array, q: number): number {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

/**
 * The CONFIDENCE interval of head mean / base mean - 1 (percentile bootstrap, RESAMPLES draws of
 * each side's points, seeded by `key`). Null when either side is empty or the base mean is 0.
 * With more than SKETCH_POINTS samples, each resampled mean's spread is scaled to n samples'
 * (`resampleMean`): the interval of a sketch matches that of its samples to the sketch's rank error.
 */
export function relativeInterval(base: Sketch, head: Sketch, key: string): { lo: number; hi: number } | null {
  if (!base.points.length || !head.points.length || sketchMean(base) <= 0) return null;
  const next = rng(seedOf(key));
  const pointsMean = (x: Sketch) => x.points.reduce((a, v) => a + v, 0) / x.points.length;
  const [pb, ph] = [pointsMean(base), pointsMean(head)];
  const ratios: number[] = [];
  for (let b = 0; b < RESAMPLES; b++) {
    const mb = resampleMean(base, pb, next);
    const mh = resampleMean(head, ph, next);
    if (mb > 0) ratios.push(mh / mb - 1);
  }
  if (ratios.length < RESAMPLES / 2) return null;
  const sorted = Float64Array.from(ratios).sort();
  const tail = (1 - CONFIDENCE) / 2;
  return { lo: quantile(sorted, tail), hi: quantile(sorted, 1 - tail) };
}

/** The normal quantile of CONFIDENCE (two-sided). */
const Z = 1.959963984540054;

/**
 * The CONFIDENCE interval of head total / base total - 1 for totals of many independent durations
 * with known variances (`varBase`, `varHead`: the totals' variances): a normal interval of the log
 * ratio (delta method: var(log T) = var(T) / T^2). Sums of thousands of kernel durations are close
 * to normal whatever the skew of one duration; on the log scale the interval stays positive and
 * is symmetric in base and head. Null when a total is 0.
 */
export function totalRatioInterval(base: number, head: number, varBase: number, varHead: number, scale = 1): { lo: number; hi: number } | null {
  if (base <= 0 || head <= 0) return null;
  const log = Math.log((head * scale) / base);
  const se = Math.sqrt(varBase / base ** 2 + varHead / head ** 2);
  return { lo: Math.exp(log - Z * se) - 1, hi: Math.exp(log + Z * se) - 1 };
}

export type Verdict = 'regressed' | 'improved' | 'unchanged' | 'inconclusive';

export interface VerdictInput {
  base: Sketch;
  head: Sketch;
  interval: { lo: number; hi: number } | null;
  /** Relative threshold (0.05). */
  threshold: number;
  /** Absolute floor in the metric's unit (ns); 0 for counts and rates. */
  floor: number;
  /** Absolute change of the mean that the floor applies to (for shares: the idle ns). */
  floorDelta: number;
  /** The base mean in the floor's unit (to turn the interval into an absolute bound). */
  floorBase: number;
}

/**
 * regressed: the whole interval lies above +threshold and the change passes the floor; improved:
 * below -threshold, likewise; unchanged: the interval lies within +-threshold, or the largest
 * change it allows is under the floor; inconclusive: too few samples, or an interval that crosses
 * +-threshold (the data cannot tell noise from change).
 */
export function verdictOf(v: VerdictInput): { verdict: Verdict; reason: string | null } {
  const { base, head, interval, threshold } = v;
  if (base.n === 0 && head.n === 0) return { verdict: 'unchanged', reason: null };
  if (base.n < MIN_SAMPLES || head.n < MIN_SAMPLES) return { verdict: 'inconclusive', reason: `too few samples (base ${base.n}, head ${head.n}; ${MIN_SAMPLES} a side at least)` };
  if (!interval) {
    if (sketchMean(head) === 0 || Math.abs(v.floorDelta) < v.floor) return { verdict: 'unchanged', reason: null };
    return { verdict: 'inconclusive', reason: 'absent from base: no relative change' };
  }
  const largest = Math.max(Math.abs(interval.lo), Math.abs(interval.hi)) * v.floorBase;
  if (v.floor > 0 && largest < v.floor) return { verdict: 'unchanged', reason: null };
  // Beyond the threshold but under the floor: a real change too small to matter (the floor's point).
  if (interval.lo > threshold) return v.floorDelta > v.floor ? { verdict: 'regressed', reason: null } : { verdict: 'unchanged', reason: 'under the absolute floor' };
  if (interval.hi < -threshold) return -v.floorDelta > v.floor ? { verdict: 'improved', reason: null } : { verdict: 'unchanged', reason: 'under the absolute floor' };
  if (interval.lo >= -threshold && interval.hi <= threshold) return { verdict: 'unchanged', reason: null };
  const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;
  return { verdict: 'inconclusive', reason: `interval ${pct(interval.lo)}..${pct(interval.hi)} crosses ${interval.lo < -threshold ? '-' : '+'}${(threshold * 100).toFixed(1)}% (base ${base.n}, head ${head.n} samples)` };
}
