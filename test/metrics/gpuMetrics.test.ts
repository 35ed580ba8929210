import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openExport } from '../../src/export/openExport.js';
import { analyzeIterations } from '../../src/iterations/analyzeIterations.js';
import type { IterationRow } from '../../src/iterations/types.js';
import { parseIterationLogFile } from '../../src/logs/parse.js';
import { ITERATION_METRICS, metricGpuByPid, metricGpuForCudaDevice, readMetricCatalog } from '../../src/metrics/catalog.js';
import { metricsOverCapture, metricsOverIntervals } from '../../src/metrics/distribution.js';
import { iterationMetrics, phaseMetrics, type IterationMetricsResult } from '../../src/metrics/iterationMetrics.js';
import { timeWeightedMeanOverSet, timeWeightedMeans, type TimeInterval } from '../../src/metrics/timeWeighted.js';
import { gpuIdOfMetricsTypeId } from '../../queries/gpuMetrics.js';
import type { ExportHandle } from '../../queries/handle.js';
import { fixture } from '../helpers/fixtures.js';
import { LoadedExport } from '../../src/load/loadedExport.js';

const SMS = 'SMs Active [Throughput %]';
const file = fixture('pytorch-gpu-metrics', 'trace.sqlite');

/**
 * Independent reference: the time-weighted mean of one metric over [start, end) in plain SQL. Each
 * sample holds until the next sample of the same metric; the sample holding at `start` is the last
 * one at or before it.
 */
function sqlTimeWeightedMean(db: BetterSqlite3.Database, metricName: string, start: number, end: number): number {
  const row = db
    .prepare(
      `WITH m AS (SELECT typeId, metricId FROM TARGET_INFO_GPU_METRICS WHERE metricName = @name),
       x AS MATERIALIZED (SELECT g.timestamp AS t, g.value AS v FROM GPU_METRICS g JOIN m ON m.typeId = g.typeId AND m.metricId = g.metricId),
       -- The samples in the window, from the one holding at its start to the one ending its last hold.
       s AS (SELECT t, v FROM x WHERE t >= (SELECT max(t) FROM x WHERE t <= @start) AND t <= (SELECT min(t) FROM x WHERE t >= @end)),
       h AS (SELECT t, v, LEAD(t) OVER (ORDER BY t) AS tn FROM s)
       SELECT SUM(v * (MIN(tn, @end) - MAX(t, @start))) AS num, SUM(MIN(tn, @end) - MAX(t, @start)) AS den
       FROM h WHERE tn > @start AND t < @end`,
    )
    .get({ name: metricName, start, end }) as { num: number; den: number };
  return row.num / row.den;
}

describe('pytorch-gpu-metrics: metric catalog', () => {
  let h: ExportHandle;
  beforeAll(() => {
    h = openExport(file);
  });
  afterAll(() => h.close());

  it('resolves the 22 metrics by name on GPU 0, whose typeId low byte is TARGET_INFO_GPU.id', () => {
    const c = readMetricCatalog(new LoadedExport(h));
    expect(c.available).toBe(true);
    expect(c.samplingHz).toBe(2000);
    expect(c.gpus).toEqual([{ gpuId: 0, name: 'NVIDIA H100 80GB HBM3', cuDevice: 0, busLocation: '0000:00:06.0', vmIdMatches: true }]);
    expect(c.metrics).toHaveLength(22);
    expect(c.metrics.find((m) => m.name === SMS)).toMatchObject({ gpuId: 0, baseName: 'SMs Active', unit: 'Throughput %' });
    // typeId 281479271677952 = 2^48 (vmId) + 2^32 + GPU id 0.
    const typeId = h.sqlite.prepare('SELECT DISTINCT typeId FROM GPU_METRICS').safeIntegers(true).pluck().all() as bigint[];
    expect(typeId).toEqual([281479271677952n]);
    expect(typeId[0]).toBe(2n ** 48n + 2n ** 32n);
    const vmId = h.sqlite.prepare('SELECT vmId FROM TARGET_INFO_GPU WHERE id = 0').safeIntegers(true).pluck().get() as bigint;
    expect(typeId[0] >> 48n).toBe(vmId >> 48n);
    expect(gpuIdOfMetricsTypeId(typeId[0])).toBe(0);
    expect(gpuIdOfMetricsTypeId(Number(typeId[0]))).toBe(0);
  });
});

describe('pytorch-gpu-metrics: metrics per iteration', () => {
  let h: ExportHandle;
  let rows: IterationRow[];
  let r: IterationMetricsResult;
  beforeAll(() => {
    h = openExport(file);
    rows = analyzeIterations(new LoadedExport(h), { logs: [parseIterationLogFile(fixture('pytorch-gpu-metrics', 'iteration_log.txt'))] }).iterations;
    r = iterationMetrics(new LoadedExport(h), rows);
  });
  afterAll(() => h.close());

  it('every iteration 0..59 has every iteration metric', () => {
    expect(rows.map((r) => r.iter)).toEqual(Array.from({ length: 60 }, (_, i) => i));
    expect(r.available).toBe(true);
    expect(r.metricNames).toEqual([
      SMS,
      'SM Issue [Throughput %]',
      'Tensor Active [Throughput %]',
      'DRAM Read Bandwidth [Throughput %]',
      'DRAM Write Bandwidth [Throughput %]',
      'GR Active [Throughput %]',
      'GPC Clock Frequency [MHz]',
    ]);
    expect(r.metricNames).toHaveLength(ITERATION_METRICS.length);
    for (const m of r.perIteration) {
      expect(m).not.toBeNull();
      for (const name of r.metricNames) expect(typeof m![name]).toBe('number');
    }
    // The clock is stored in Hz under a [MHz] name: reported in MHz (the H100 boosts to ~1980 MHz).
    expect(r.notes).toContain('GPC Clock Frequency [MHz]: stored in Hz, reported in MHz');
    for (const m of r.perIteration) {
      expect(m!['GPC Clock Frequency [MHz]']).toBeGreaterThan(300);
      expect(m!['GPC Clock Frequency [MHz]']).toBeLessThan(2100);
    }
  });

  it("iteration 10's SMs Active equals an independent plain-SQL recomputation (+-0.01)", () => {
    const i = rows.findIndex((x) => x.iter === 10);
    const it10 = rows[i];
    const ours = r.perIteration[i]![SMS]!;
    const ref = sqlTimeWeightedMean(h.sqlite, SMS, it10.startNs, it10.endNs);
    expect(Math.abs(ours - ref)).toBeLessThan(0.01);
    expect(ours).toBeCloseTo(12.90, 1);
    // The other percentage metrics, each on another iteration, against the same SQL.
    r.metricNames.slice(1, 6).forEach((name, k) => {
      const j = 5 + 11 * k;
      expect(Math.abs(r.perIteration[j]![name]! - sqlTimeWeightedMean(h.sqlite, name, rows[j].startNs, rows[j].endNs))).toBeLessThan(0.01);
    });
  });

  it('timeWeightedMeans on the iteration windows gives the same numbers, and the SQL reference agrees', () => {
    const windows = rows.map((r) => ({ startNs: r.startNs, endNs: r.endNs }));
    const means = timeWeightedMeans(new LoadedExport(h), windows, { metrics: ['SMs Active'] });
    expect(means).toHaveLength(60);
    for (let i = 0; i < 60; i++) expect(means[i][SMS]).toBeCloseTo(r.perIteration[i]![SMS]!, 9);
    // Unsorted input: same result per interval.
    const reversed = timeWeightedMeans(new LoadedExport(h), [...windows].reverse(), { metrics: ['SMs Active'] });
    expect(reversed.reverse().map((m) => m[SMS])).toEqual(means.map((m) => m[SMS]));
  });

  it('per phase: the time-weighted mean over all windows of the phase (no second pass)', () => {
    const byPhase = phaseMetrics(rows, r);
    expect([...byPhase.keys()]).toEqual(['context', 'mixed', 'generation']);
    for (const [phase, rec] of byPhase) {
      const windows = rows.filter((x) => x.phase === phase);
      const ref = timeWeightedMeanOverSet(new LoadedExport(h), windows, { metrics: ['SMs Active'] })[SMS]!;
      expect(rec[SMS]).toBeCloseTo(ref, 9);
    }
    // Decode-heavy generation iterations keep more SMs busy than the short context ones here.
    expect(byPhase.get('generation')![SMS]!).toBeGreaterThan(byPhase.get('context')![SMS]!);
  });

  // How long the pass takes is `npm run bench`'s to measure, not a test's (a timed assertion failed
  // at 1079 ms on a loaded machine): what is pinned here is that it is one pass over the span's rows.
  it('the pass over the capture reads the metric rows once, in one pass', () => {
    const cap = metricsOverCapture(new LoadedExport(h));
    expect(cap.scan!.passes).toBe(1);
    expect(cap.scan!.rows).toBe(341_902);
  });
});

describe('pytorch-gpu-metrics: SMs Active inside GPU idle gaps', () => {
  let h: ExportHandle;
  beforeAll(() => {
    h = openExport(file);
  });
  afterAll(() => h.close());

  /** Union of kernel, memcpy and memset intervals (sort and merge), and the idle gaps >= 1 ms between them. */
  function busyAndGaps(db: BetterSqlite3.Database): { busy: TimeInterval[]; gaps: TimeInterval[] } {
    const ops = db
      .prepare(
        `SELECT start, "end" FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL SELECT start, "end" FROM CUPTI_ACTIVITY_KIND_MEMCPY
         UNION ALL SELECT start, "end" FROM CUPTI_ACTIVITY_KIND_MEMSET`,
      )
      .raw(true)
      .all() as [number, number][];
    ops.sort((a, b) => a[0] - b[0]);
    const busy: TimeInterval[] = [];
    for (const [s, e] of ops) {
      const last = busy[busy.length - 1];
      if (last && s <= last.endNs) last.endNs = Math.max(last.endNs, e);
      else busy.push({ startNs: s, endNs: e });
    }
    const gaps: TimeInterval[] = [];
    for (let i = 1; i < busy.length; i++) {
      if (busy[i].startNs - busy[i - 1].endNs >= 1_000_000) gaps.push({ startNs: busy[i - 1].endNs, endNs: busy[i].startNs });
    }
    return { busy, gaps };
  }

  it('mean SMs Active inside gaps >= 1 ms is below the mean over busy time', () => {
    const { busy, gaps } = busyAndGaps(h.sqlite);
    expect(gaps.length).toBeGreaterThan(10);
    expect(busy.length).toBeGreaterThan(1000);
    const inGaps = timeWeightedMeanOverSet(new LoadedExport(h), gaps, { metrics: ['SMs Active'] })[SMS]!;
    const inBusy = timeWeightedMeanOverSet(new LoadedExport(h), busy, { metrics: ['SMs Active'] })[SMS]!;
    expect(inGaps).toBeLessThan(inBusy);
    // Per gap (what the gaps module asks for): one value each, and the set mean is their time-weighted mean.
    const perGap = timeWeightedMeans(new LoadedExport(h), gaps, { metrics: ['SMs Active'] });
    expect(perGap).toHaveLength(gaps.length);
    let num = 0;
    let den = 0;
    gaps.forEach((g, i) => {
      expect(perGap[i][SMS]).not.toBeNull();
      num += perGap[i][SMS]! * (g.endNs - g.startNs);
      den += g.endNs - g.startNs;
    });
    expect(num / den).toBeCloseTo(inGaps, 6);
    // Spot-check one gap against plain SQL.
    const g = gaps[Math.floor(gaps.length / 2)];
    expect(Math.abs(perGap[Math.floor(gaps.length / 2)][SMS]! - sqlTimeWeightedMean(h.sqlite, SMS, g.startNs, g.endNs))).toBeLessThan(0.01);
  });
});

describe('pytorch-gpu-metrics: capture statistics', () => {
  let h: ExportHandle;
  beforeAll(() => {
    h = openExport(file);
  });
  afterAll(() => h.close());

  it('over the whole capture: time-weighted mean equals the SQL mean between the first and last sample', () => {
    const s = metricsOverCapture(new LoadedExport(h));
    expect(s.available).toBe(true);
    expect(s.metrics).toHaveLength(22);
    const sms = s.metrics.find((m) => m.metric === SMS)!;
    const { first, last } = h.sqlite.prepare('SELECT min(timestamp) AS first, max(timestamp) AS last FROM GPU_METRICS').get() as { first: number; last: number };
    expect(Math.abs(sms.mean! - sqlTimeWeightedMean(h.sqlite, SMS, first, last))).toBeLessThan(1e-9);
    expect(sms.mean).toBeCloseTo(0.648, 3);
    // Mostly idle capture (kernels run 5.1 s .. 7.0 s of 0.3 .. 7.8 s): p50 = p90 = 0, max 70.
    expect(sms).toMatchObject({ p50: 0, p90: 0, min: 0, max: 70, samples: 15_540, convertedFromHz: false });
    const clock = s.metrics.find((m) => m.metric === 'GPC Clock Frequency [MHz]')!;
    expect(clock.convertedFromHz).toBe(true);
    expect(clock.max).toBeCloseTo(1995.16219, 4);
    for (const m of s.metrics) {
      if (m.mean == null) continue;
      expect(m.min!).toBeLessThanOrEqual(m.p50!);
      expect(m.p50!).toBeLessThanOrEqual(m.p90!);
      expect(m.p90!).toBeLessThanOrEqual(m.max!);
    }
  });

  it('over a span and over the union of iteration windows', () => {
    const rows = analyzeIterations(new LoadedExport(h)).iterations.filter((r) => r.iter >= 10 && r.iter <= 19);
    const u = metricsOverIntervals(new LoadedExport(h), rows, { metrics: ['SMs Active', 'Tensor Active'] });
    expect(u.scope.kind).toBe('intervals');
    expect(u.metrics.map((m) => m.metric)).toEqual([SMS, 'Tensor Active [Throughput %]']);
    const span = metricsOverCapture(new LoadedExport(h), { startNs: rows[0].startNs, endNs: rows[rows.length - 1].endNs, metrics: ['SMs Active'] });
    // Iteration windows are contiguous: the union is the span.
    expect(u.metrics[0].mean!).toBeCloseTo(span.metrics[0].mean!, 9);
    expect(Math.abs(span.metrics[0].mean! - sqlTimeWeightedMean(h.sqlite, SMS, rows[0].startNs, rows[rows.length - 1].endNs))).toBeLessThan(0.01);
    expect(span.metrics[0].mean!).toBeGreaterThan(5);
  });
});

describe('pytorch-gpu-metrics: CUDA device to sampled GPU', () => {
  it('device 0 of the serving process is GPU 0; an unknown device has no metrics', () => {
    const h = openExport(file);
    try {
      const c = readMetricCatalog(new LoadedExport(h));
      const pid = h.sqlite.prepare('SELECT pid FROM TARGET_INFO_CUDA_DEVICE').pluck().get() as number;
      expect(metricGpuForCudaDevice(new LoadedExport(h), c, 0, pid)).toBe(0);
      expect(metricGpuForCudaDevice(new LoadedExport(h), c, 0)).toBe(0);
      expect(metricGpuForCudaDevice(new LoadedExport(h), c, 5)).toBeNull();
      expect(metricGpuByPid(new LoadedExport(h), c, [pid])).toEqual(new Map([[pid, 0]]));
    } finally {
      h.close();
    }
  });
});
