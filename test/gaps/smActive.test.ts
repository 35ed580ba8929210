import { describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { unionIntervals } from '../../src/math/intervals.js';
import { timeWeightedMeanOverSet } from '../../src/metrics/timeWeighted.js';
import { runCli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';
import { gapsOf } from '../helpers/pipeline.js';
import { LoadedExport } from '../../src/load/loadedExport.js';

const metricsExport = fixture('pytorch-gpu-metrics', 'trace.sqlite');

describe('gaps carry the mean SMs Active inside them (pytorch-gpu-metrics)', () => {
  const gaps = withExport(metricsExport, (h) => gapsOf(h, { minGapNs: 1_000_000 }));

  it('every gap >= 1 ms has a value, and their time-weighted mean is below the mean over busy time', () => {
    expect(gaps.gaps.length).toBeGreaterThan(0);
    for (const g of gaps.gaps) expect(g.smActivePct).not.toBeUndefined();
    const weighted = gaps.gaps.reduce((a, g) => a + (g.smActivePct ?? 0) * g.durationNs, 0) / gaps.gaps.reduce((a, g) => a + g.durationNs, 0);
    const busyMean = withExport(metricsExport, (h) => {
      const rows = h.sqlite.prepare('SELECT start, "end" FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL SELECT start, "end" FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL SELECT start, "end" FROM CUPTI_ACTIVITY_KIND_MEMSET').raw(true).all() as [number, number][];
      const busy = unionIntervals(rows.map((r) => r[0]), rows.map((r) => r[1]));
      const intervals = Array.from(busy.starts, (s, i) => ({ startNs: s, endNs: busy.ends[i] }));
      const rec = timeWeightedMeanOverSet(new LoadedExport(h), intervals, { metrics: ['SMs Active'] });
      return Object.values(rec)[0]!;
    });
    expect(weighted).toBeLessThan(busyMean);
  });

  it('exports without metrics have no smActivePct and no error', () => {
    const dense = withExport(fixture('pytorch-tp2', 'trace.rank0.sqlite'), (h) => gapsOf(h, { minGapNs: 1_000_000 }));
    expect(dense.gaps.length).toBeGreaterThan(0);
    expect(dense.gaps.every((g) => g.smActivePct === undefined)).toBe(true);
  });
});

describe('iterations with GPU metrics (CLI)', () => {
  it('adds a metrics object to every iteration 0..59 and per phase with --summary', () => {
    const r = runCli(['iterations', metricsExport, '--log', fixture('pytorch-gpu-metrics', 'iteration_log.txt'), '--format', 'json', '--no-idle-causes']);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.iterations.map((x: { iter: number }) => x.iter)).toEqual(Array.from({ length: 60 }, (_, i) => i));
    for (const it of out.iterations) {
      expect(Object.keys(it.metrics)).toEqual(expect.arrayContaining(['SMs Active [Throughput %]', 'Tensor Active [Throughput %]', 'DRAM Read Bandwidth [Throughput %]']));
      expect(it.metrics['SMs Active [Throughput %]']).toBeGreaterThanOrEqual(0);
    }
    const s = runCli(['iterations', metricsExport, '--summary', '--format', 'json', '--no-idle-causes']);
    const phases = JSON.parse(s.stdout).phases;
    expect(phases.every((p: { metrics?: object }) => p.metrics && 'SMs Active [Throughput %]' in p.metrics)).toBe(true);
  });
  it('an export without metrics gets no metrics field and a note', () => {
    const r = runCli(['iterations', fixture('pytorch-tp2', 'trace.rank0.sqlite'), '--format', 'json', '--no-idle-causes']);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.iterations.every((x: object) => !('metrics' in x))).toBe(true);
    expect(r.stderr).toMatch(/no GPU metrics/);
  });
});
