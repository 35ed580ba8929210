import { expect } from 'vitest';
import type { DurationStats } from '../../src/math/durationStats.js';

/** The statistics columns `nsys stats` prints for cuda_gpu_kern_sum and nvtx_sum. */
export const STAT_HEADERS = ['Time (%)', 'Total Time (ns)', 'Instances', 'Avg (ns)', 'Med (ns)', 'Min (ns)', 'Max (ns)', 'StdDev (ns)'] as const;

/** nsys rounds Avg, Med, StdDev and Time (%) to one decimal: we must agree within that. */
export const DERIVED_TOLERANCE = 0.1;

/** A nsys integer cell (ns totals, counts, min, max): digits only, read exactly. */
export function exactInt(cell: string): number {
  expect(cell, `integer cell '${cell}'`).toMatch(/^\d+$/);
  const v = Number(cell);
  expect(Number.isSafeInteger(v)).toBe(true);
  return v;
}

/**
 * Asserts one summary row against an oracle row: counts and ns totals (and min/max, which are
 * plain ns values) exactly; the rounded columns within nsys's rounding.
 */
export function expectStatsMatch(ours: DurationStats & { timePercent: number }, oracle: Record<string, string>, label: string): void {
  expect(ours.count, `${label}: Instances`).toBe(exactInt(oracle['Instances']));
  expect(ours.total, `${label}: Total Time (ns)`).toBe(exactInt(oracle['Total Time (ns)']));
  expect(ours.min, `${label}: Min (ns)`).toBe(exactInt(oracle['Min (ns)']));
  expect(ours.max, `${label}: Max (ns)`).toBe(exactInt(oracle['Max (ns)']));
  const near = (v: number, cell: string, what: string) => {
    const o = Number(cell);
    expect(Number.isFinite(o), `${label}: ${what} '${cell}' is a number`).toBe(true);
    expect(Math.abs(v - o), `${label}: ${what} ours ${v} vs nsys ${cell}`).toBeLessThanOrEqual(DERIVED_TOLERANCE + 1e-9);
  };
  near(ours.avg, oracle['Avg (ns)'], 'Avg (ns)');
  near(ours.med, oracle['Med (ns)'], 'Med (ns)');
  near(ours.stdDev, oracle['StdDev (ns)'], 'StdDev (ns)');
  near(ours.timePercent, oracle['Time (%)'], 'Time (%)');
}
