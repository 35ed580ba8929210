import BetterSqlite3 from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openExport } from '../../src/export/openExport.js';
import { readMetricCatalog, resolveMetrics } from '../../src/metrics/catalog.js';
import { metricsOverCapture, weightedPercentile } from '../../src/metrics/distribution.js';
import { iterationMetrics } from '../../src/metrics/iterationMetrics.js';
import { timeWeightedMeans, timeWeightedSums } from '../../src/metrics/timeWeighted.js';
import { LoadedExport } from '../../src/load/loadedExport.js';

/**
 * Small hand-made exports (nsys 2025.3 table layout) for what the real fixture cannot show:
 * rows out of time order, sampling gaps, windows past the first/last sample, two GPUs whose
 * metric ids differ, a typeId above 2^53.
 */

const dir = mkdtempSync(join(tmpdir(), 'iterscope-metrics-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const MS = 1_000_000;
const TYPE0 = 2n ** 48n + 2n ** 32n; // GPU 0, as on the fixture
const TYPE1 = 2n ** 56n + 2n ** 48n + 2n ** 32n + 1n; // GPU 1 with hardware-id bits set: > 2^53

type Sample = [t: number, type: bigint, metricId: number, value: number];

function makeExport(name: string, metrics: [type: bigint, metricId: number, metricName: string][], samples: Sample[]): string {
  const path = join(dir, `${name}.sqlite`);
  const db = new BetterSqlite3(path);
  db.exec(`
    CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT, cuDevice INTEGER);
    CREATE TABLE META_DATA_CAPTURE (name TEXT NOT NULL, value TEXT);
    CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER NOT NULL, sourceId INTEGER NOT NULL, typeName TEXT NOT NULL, metricId INTEGER NOT NULL, metricName TEXT NOT NULL);
    CREATE TABLE GPU_METRICS (rawTimestamp INTEGER NOT NULL, timestamp INTEGER NOT NULL, typeId INTEGER NOT NULL, metricId INTEGER NOT NULL, value INTEGER NOT NULL);
  `);
  db.prepare('INSERT INTO TARGET_INFO_GPU VALUES (?, ?, ?, ?, ?)').run(2n ** 48n, 0, 'GPU zero', '0000:00:06.0', 0);
  db.prepare('INSERT INTO TARGET_INFO_GPU VALUES (?, ?, ?, ?, ?)').run(2n ** 56n + 2n ** 48n, 1, 'GPU one', '0000:00:07.0', 1);
  db.prepare("INSERT INTO META_DATA_CAPTURE VALUES ('GPU_METRICS_OPTIONS:SAMPLING_FREQUENCY', '1000')").run();
  const m = db.prepare('INSERT INTO TARGET_INFO_GPU_METRICS VALUES (?, ?, ?, ?, ?)');
  for (const [type, id, n] of metrics) m.run(type, type, '', id, n);
  const s = db.prepare('INSERT INTO GPU_METRICS VALUES (?, ?, ?, ?, ?)');
  for (const [t, type, id, v] of samples) s.run(t, t, type, id, v);
  db.close();
  return path;
}

const SMS = 'SMs Active [Throughput %]';

describe('sample-and-hold semantics on hand-made exports', () => {
  // SMs Active on GPU 0: 10 from 0 ms, 30 from 10 ms, 0 from 20 ms, last sample at 30 ms.
  const base: Sample[] = [
    [0, TYPE0, 3, 10],
    [10 * MS, TYPE0, 3, 30],
    [20 * MS, TYPE0, 3, 0],
    [30 * MS, TYPE0, 3, 0],
  ];
  const sorted = makeExport('sorted', [[TYPE0, 3, SMS]], base);
  const shuffled = makeExport('shuffled', [[TYPE0, 3, SMS]], [base[2], base[0], base[3], base[1]]);

  const intervals = [
    { startNs: 5 * MS, endNs: 15 * MS }, // 10 for 5 ms, 30 for 5 ms -> 20
    { startNs: 0, endNs: 10 * MS }, // 10
    { startNs: 12 * MS, endNs: 12 * MS }, // zero length -> null
    { startNs: 25 * MS, endNs: 40 * MS }, // 0 held 25..30; nothing after the last sample -> 0
    { startNs: 40 * MS, endNs: 50 * MS }, // after the last sample -> null
    { startNs: 0, endNs: 30 * MS }, // overlaps the others: (10*10 + 30*10 + 0*10) / 30
  ];
  const expected = [20, 10, null, 0, null, 400 / 30];

  it('the sample holding at an interval start counts; uncovered time does not; overlapping intervals are fine', () => {
    const h = openExport(sorted);
    try {
      const means = timeWeightedMeans(new LoadedExport(h), intervals).map((r) => r[SMS]);
      means.forEach((v, i) => (expected[i] === null ? expect(v).toBeNull() : expect(v).toBeCloseTo(expected[i]!, 9)));
      const sums = timeWeightedSums(new LoadedExport(h), intervals)!;
      // Covered time of [25 ms, 40 ms): 5 ms (coverage ends at the last sample).
      expect(sums.coveredNs[3]).toBe(5 * MS);
    } finally {
      h.close();
    }
  });

  it('rows out of time order: the pass detects it and reads again with ORDER BY timestamp', () => {
    const h = openExport(shuffled);
    try {
      const r = timeWeightedSums(new LoadedExport(h), intervals)!;
      expect(r.stats.orderedBySql).toBe(true);
      expect(r.stats.restarts.join()).toContain('not in time order');
      const means = timeWeightedMeans(new LoadedExport(h), intervals).map((x) => x[SMS]);
      means.forEach((v, i) => (expected[i] === null ? expect(v).toBeNull() : expect(v).toBeCloseTo(expected[i]!, 9)));
    } finally {
      h.close();
    }
  });

  it('a hold longer than the read padding (sampling gap) is still found: the pass reads unfiltered', () => {
    // Samples 1 s apart: the one holding at 1.5 s is 500 ms before the window (padding: 200 periods at 1 kHz = 200 ms).
    const path = makeExport('gap', [[TYPE0, 3, SMS]], [
      [0, TYPE0, 3, 5],
      [1000 * MS, TYPE0, 3, 50],
      [2000 * MS, TYPE0, 3, 7],
    ]);
    const h = openExport(path);
    try {
      const r = timeWeightedSums(new LoadedExport(h), [{ startNs: 1500 * MS, endNs: 1600 * MS }])!;
      expect(r.stats.passes).toBe(2);
      expect(r.stats.timeFiltered).toBe(false);
      expect(r.sums[0] / r.coveredNs[0]).toBe(50);
    } finally {
      h.close();
    }
  });

  it('time-weighted percentiles weigh each value by how long it held', () => {
    const h = openExport(sorted);
    try {
      // 10 for 10 ms, 30 for 10 ms, 0 for 10 ms: p50 = 10, p90 = 30 (sample percentiles over 4 samples would differ).
      const s = metricsOverCapture(new LoadedExport(h));
      expect(s.metrics).toHaveLength(1);
      expect(s.metrics[0]).toMatchObject({ metric: SMS, p50: 10, p90: 30, min: 0, max: 30, samples: 3, coveredNs: 30 * MS });
      expect(s.metrics[0].mean).toBeCloseTo(40 / 3, 9);
      // A span clips the holds.
      const span = metricsOverCapture(new LoadedExport(h), { startNs: 15 * MS, endNs: 25 * MS });
      expect(span.metrics[0]).toMatchObject({ mean: 15, p50: 0, p90: 30, min: 0, max: 30, coveredNs: 10 * MS });
      expect(weightedPercentile(new Map([[1, 1], [2, 3]]), 25)).toBe(1);
      expect(weightedPercentile(new Map([[1, 1], [2, 3]]), 26)).toBe(2);
      expect(weightedPercentile(new Map(), 50)).toBeNull();
    } finally {
      h.close();
    }
  });
});

describe('two GPUs, metric ids that differ per GPU, typeId above 2^53', () => {
  const path = makeExport(
    'twogpu',
    [
      [TYPE0, 0, 'GPC Clock Frequency [MHz]'],
      [TYPE0, 3, SMS],
      [TYPE1, 7, SMS],
      [TYPE1, 2, 'GPC Clock Frequency [MHz]'],
    ],
    [
      [0, TYPE0, 3, 20],
      [0, TYPE1, 7, 80],
      [0, TYPE0, 0, 1_500_000_000],
      [0, TYPE1, 2, 1_800_000_000],
      [10 * MS, TYPE0, 3, 40],
      [10 * MS, TYPE1, 7, 60],
      [10 * MS, TYPE0, 0, 1_500_000_000],
      [10 * MS, TYPE1, 2, 1_800_000_000],
      [20 * MS, TYPE0, 3, 0],
      [20 * MS, TYPE1, 7, 0],
      [20 * MS, TYPE0, 0, 1_500_000_000],
      [20 * MS, TYPE1, 2, 1_800_000_000],
    ],
  );

  it('maps typeId & 0xFF to TARGET_INFO_GPU.id and resolves metrics by name per GPU', () => {
    const h = openExport(path);
    try {
      const c = readMetricCatalog(new LoadedExport(h));
      expect(c.gpus.map((g) => [g.gpuId, g.name, g.vmIdMatches])).toEqual([
        [0, 'GPU zero', true],
        [1, 'GPU one', true],
      ]);
      expect(resolveMetrics(c, 1, ['sms active']).found.map((m) => m.metricId)).toEqual([7]);
      expect(resolveMetrics(c, 0, ['SMs Active [Throughput %]', 'No Such Metric'])).toMatchObject({ found: [{ metricId: 3 }], missing: ['No Such Metric'] });
      const w = [{ startNs: 0, endNs: 20 * MS }];
      expect(timeWeightedMeans(new LoadedExport(h), w, { gpu: 0 })[0]).toEqual({ 'GPC Clock Frequency [MHz]': 1500, [SMS]: 30 });
      expect(timeWeightedMeans(new LoadedExport(h), w, { gpu: 1 })[0]).toEqual({ [SMS]: 70, 'GPC Clock Frequency [MHz]': 1800 });
      expect(() => timeWeightedMeans(new LoadedExport(h), w, { gpu: 2 })).toThrow(/not sampled/);
      const all = metricsOverCapture(new LoadedExport(h));
      expect(all.metrics.map((m) => [m.gpuId, m.metric, m.mean])).toEqual([
        [0, 'GPC Clock Frequency [MHz]', 1500],
        [0, SMS, 30],
        [1, 'GPC Clock Frequency [MHz]', 1800],
        [1, SMS, 70],
      ]);
      // Iterations of one process on GPU 1 (forced; the hand-made export has no kernels to infer it).
      const it = iterationMetrics(new LoadedExport(h), [{ iter: 0, pid: 1, startNs: 0, endNs: 10 * MS, phase: 'generation' }], { gpu: 1, metrics: ['SMs Active'] });
      expect(it.perIteration[0]).toEqual({ [SMS]: 80 });
    } finally {
      h.close();
    }
  });
});

describe('an export whose metric tables are absent or empty', () => {
  it('has no metrics, one note, and costs no scan', () => {
    const path = makeExport('empty', [[TYPE0, 3, SMS]], []);
    const h = openExport(path);
    try {
      const c = readMetricCatalog(new LoadedExport(h));
      expect(c.available).toBe(false);
      expect(c.reason).toMatch(/GPU_METRICS is empty/);
      expect(timeWeightedMeans(new LoadedExport(h), [{ startNs: 0, endNs: 1 }])).toEqual([{}]);
      expect(timeWeightedSums(new LoadedExport(h), [{ startNs: 0, endNs: 1 }])).toBeNull();
      const it = iterationMetrics(new LoadedExport(h), [{ iter: 0, pid: 1, startNs: 0, endNs: 1 }]);
      expect(it).toMatchObject({ available: false, perIteration: [null], metricNames: [] });
      expect(it.notes).toHaveLength(1);
    } finally {
      h.close();
    }
  });
});
