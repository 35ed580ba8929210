/**
 * The statistics `nsys stats` prints for a group of durations: total, count, mean, median (mean of
 * the two middle values for an even count), min, max and the sample standard deviation (n-1; 0
 * for a single value).
 */
export interface DurationStats {
  total: number;
  count: number;
  avg: number;
  med: number;
  min: number;
  max: number;
  stdDev: number;
}

/** Growable Float64 buffer: collects a group's values without an array of boxed numbers. */
export class Float64Buffer {
  private buf: Float64Array;
  length = 0;
  constructor(capacity = 16) {
    this.buf = new Float64Array(capacity);
  }
  push(v: number): void {
    if (this.length === this.buf.length) {
      const next = new Float64Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length++] = v;
  }
  /** A view of the values (shares memory with the buffer). */
  view(): Float64Array {
    return this.buf.subarray(0, this.length);
  }
}

/** Statistics of `values` (sorted in place). */
export function durationStats(values: Float64Array): DurationStats {
  const n = values.length;
  if (n === 0) return { total: 0, count: 0, avg: 0, med: 0, min: 0, max: 0, stdDev: 0 };
  values.sort();
  let total = 0;
  for (let i = 0; i < n; i++) total += values[i];
  const avg = total / n;
  let sq = 0;
  for (let i = 0; i < n; i++) {
    const d = values[i] - avg;
    sq += d * d;
  }
  const mid = n >> 1;
  const med = n % 2 === 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
  return { total, count: n, avg, med, min: values[0], max: values[n - 1], stdDev: n > 1 ? Math.sqrt(sq / (n - 1)) : 0 };
}

/** `Time (%)` as nsys computes it: share of the summed totals, one decimal. */
export function percentOf(part: number, whole: number): number {
  return whole > 0 ? Number(((part * 100) / whole).toFixed(1)) : 0;
}
