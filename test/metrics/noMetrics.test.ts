import { describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { analyzeIterations } from '../../src/iterations/analyzeIterations.js';
import { readMetricCatalog } from '../../src/metrics/catalog.js';
import { metricsOverCapture } from '../../src/metrics/distribution.js';
import { iterationMetrics, phaseMetrics } from '../../src/metrics/iterationMetrics.js';
import { timeWeightedMeans } from '../../src/metrics/timeWeighted.js';
import { fixture } from '../helpers/fixtures.js';
import { LoadedExport } from '../../src/load/loadedExport.js';

describe('exports without GPU metrics: no metrics fields, a note, no error', () => {
  for (const parts of [
    ['pytorch-dense', 'trace.sqlite'],
    ['external', 'nsys2026.2_h100_2gpu_1s_nsysai.sqlite'],
    ['external', 'legacy2021_mordred.sqlite'],
  ]) {
    it(parts.join('/'), () => {
      withExport(fixture(...parts), (h) => {
        const catalog = readMetricCatalog(new LoadedExport(h));
        expect(catalog.available).toBe(false);
        expect(catalog.reason).toMatch(/^no GPU metrics in this export \(no GPU_METRICS \/ TARGET_INFO_GPU_METRICS table/);

        const windows = [{ startNs: 0, endNs: 1e9 }];
        expect(timeWeightedMeans(new LoadedExport(h), windows)).toEqual([{}]);

        const summary = metricsOverCapture(new LoadedExport(h));
        expect(summary).toMatchObject({ available: false, metrics: [], scan: null });
        expect(summary.notes).toEqual([catalog.reason]);

        const rows = parts[0] === 'pytorch-dense' ? analyzeIterations(new LoadedExport(h)).iterations : [{ iter: 0, pid: 1, startNs: 0, endNs: 1e9, phase: 'unknown' as const }];
        // Table-existence checks only (no scan: `metricsOverCapture` says `scan: null` above); its time is the bench's, not a test's.
        const r = iterationMetrics(new LoadedExport(h), rows);
        expect(r.available).toBe(false);
        expect(r.notes).toEqual([catalog.reason]);
        expect(r.perIteration.every((m) => m === null)).toBe(true);
        expect(phaseMetrics(rows, r).size).toBe(0);
      });
    });
  }
});
