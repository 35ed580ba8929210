import { describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import { fixture } from '../helpers/fixtures.js';

/**
 * The layer findings on a real capture: pytorch-tp2 rank 0 (eager, 8 layers, NCCL), whose ranks
 * skew so that some layers wait longer in their all-reduces than others.
 */
describe('layer findings (pytorch-tp2 rank 0)', () => {
  const file = fixture('pytorch-tp2', 'trace.rank0.sqlite');
  const ratio = 1.3;
  const a = withExport(file, (h) => analyzeExport(h, { parts: ['findings', 'layers'], layers: { outlierRatio: ratio } }));

  it('names the layers at the ratio or more above the median layer of their phase, as the steps say', () => {
    const layers = a.layers!;
    // From the steps alone: per phase, each layer's mean ns per step against the median layer.
    const expected: string[] = [];
    for (const phase of new Set(layers.steps.map((s) => s.phase))) {
      const steps = layers.steps.filter((s) => s.phase === phase);
      const means = [0, 1, 2, 3, 4, 5, 6, 7].map((l) => steps.reduce((x, s) => x + (s.layers.find((f) => f.layer === l)?.kernelNs ?? 0), 0) / steps.length);
      const sorted = [...means].sort((x, y) => x - y);
      const med = (sorted[3] + sorted[4]) / 2;
      means.forEach((m, l) => {
        if (m >= ratio * med) expected.push(`${phase}: layer ${l} `);
      });
    }
    expect(expected.length).toBeGreaterThan(0);
    const f = a.findings!.findings.find((x) => x.id === 'layer-outlier')!;
    expect(f).toBeDefined();
    expect(f.evidence.map((e) => e.text.slice(0, e.text.indexOf('takes')))).toEqual(expected);
    expect(f.recoverableNs).toBeGreaterThan(0);
    expect(f.recoverableNs).toBeLessThanOrEqual(f.restsOnNs);
    expect(f.confidence.level).toBe('inferred');
  });

  it('adds no layer finding when the layers were not asked for', () => {
    const plain = withExport(file, (h) => analyzeExport(h, { parts: ['findings'] }));
    expect(plain.layers).toBeUndefined();
    expect(plain.findings!.findings.filter((x) => ['layer-outlier', 'outside-layers', 'attention-kv-growth'].includes(x.id))).toEqual([]);
    // The other findings are the same with or without the layers.
    const others = a.findings!.findings.filter((x) => !['layer-outlier', 'outside-layers', 'attention-kv-growth'].includes(x.id));
    expect(others).toEqual(plain.findings!.findings);
  });
});
