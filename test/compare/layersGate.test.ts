import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Comparison, MetricDelta } from '../../src/compare/compareRuns.js';
import { runCli } from '../helpers/cli.js';
import { captured, hasCaptured } from '../helpers/captured.js';

/**
 * `compare --layers` on the CI-gate captures (test/fixtures-captured/gate: 4 decoder layers, graphs
 * traced per node, so the split is inferred). The slow variant (generator llm_loop.py
 * `--extra-work`) adds one RMS norm per decoder layer, `x + 0.0 * rms(x, n2)`: norm time up in every
 * layer, nothing else, and nothing outside the layers.
 */
const GATE = hasCaptured('gate', 'vllm-a/trace.sqlite');
const at = (run: string, file: string) => captured('gate', run, file);
const LAYERS = ['layer 0 per iteration', 'layer 1 per iteration', 'layer 2 per iteration', 'layer 3 per iteration'];

function compare(base: string, head: string, extra: string[] = [], headLog = at(`vllm-${head}`, 'vllm.log')) {
  const b = base.endsWith('.json') ? base : at(`vllm-${base}`, 'trace.sqlite');
  const h = head.endsWith('.sqlite') ? head : at(`vllm-${head}`, 'trace.sqlite');
  const logs = base.endsWith('.json') ? ['--head-log', headLog] : ['--base-log', at(`vllm-${base}`, 'vllm.log'), '--head-log', headLog];
  const r = runCli(['compare', b, h, ...logs, '--format', 'json', ...extra]);
  return { ...r, c: JSON.parse(r.stdout) as Comparison };
}
const metric = (c: Comparison, name: string, scope = 'generation'): MetricDelta => {
  const m = c.metrics.find((x) => x.metric === name && x.scope === scope);
  if (!m) throw new Error(`no metric ${name} [${scope}]`);
  return m;
};
const layerRows = (c: Comparison) => c.metrics.filter((m) => /^(layer \d+|module \w+|outside layers) per iteration$/.test(m.metric));

describe.skipIf(!GATE)('compare --layers on the CI-gate captures', () => {
  it('vllm a vs b: every layer, module kind and the time outside layers unchanged in generation (exit 0); nothing without --layers', () => {
    const { status, c } = compare('a', 'b', ['--layers']);
    expect(status).toBe(0);
    expect(c.regressions).toEqual([]);
    const rows = layerRows(c).filter((m) => m.scope === 'generation');
    expect(rows.map((m) => m.metric)).toEqual([...LAYERS, 'module attention per iteration', 'module norm per iteration', 'module sampler per iteration', 'module other per iteration', 'outside layers per iteration']);
    for (const m of rows) {
      expect(m.gated, m.metric).toBe(true);
      expect(m.verdict, m.metric).toBe('unchanged');
      expect(m.samples).toEqual({ base: 53, head: 53 });
    }
    // The 7 mixed steps a side: too few samples, as the phase's other metrics.
    for (const m of layerRows(c).filter((x) => x.scope === 'mixed')) expect(m.verdict, m.metric).toBe('inconclusive');
    expect(layerRows(compare('a', 'b').c)).toEqual([]);
  });

  it('vllm a vs slow: module norm regressed (+39%, the extra norm); every layer up 4-5%, each under the 5% threshold; attention and outside layers unchanged', () => {
    const { status, stderr, c } = compare('a', 'slow', ['--layers']);
    expect(status).toBe(1);
    expect(stderr).toMatch(/module norm per iteration \[generation\] \+39\.\d% \(\+3\d\.\d%\.\.\+\d\d\.\d%\)/);
    const norm = metric(c, 'module norm per iteration');
    expect(norm.verdict).toBe('regressed');
    expect(norm.interval!.lo).toBeGreaterThan(0.35);
    // Period-inferred kinds come from kernel categories: the module kind equals the category.
    expect(norm.base).toBe(metric(c, 'norm per iteration').base);
    expect(norm.head).toBe(metric(c, 'norm per iteration').head);
    for (const l of LAYERS) {
      const m = metric(c, l);
      expect(m.interval!.lo, l).toBeGreaterThan(0.03);
      expect(m.interval!.hi, l).toBeLessThan(0.05);
      expect(m.verdict, l).toBe('unchanged');
    }
    for (const name of ['module attention per iteration', 'module sampler per iteration', 'outside layers per iteration']) expect(metric(c, name).verdict, name).toBe('unchanged');
    // At 3% with a 1 us floor, the slowdown shows in every layer.
    const strict = compare('a', 'slow', ['--layers', '--threshold', '3%', '--min-delta', '1us']);
    for (const l of LAYERS) expect(metric(strict.c, l).verdict, l).toBe('regressed');
    expect(metric(strict.c, 'outside layers per iteration').verdict).toBe('unchanged');
  });

  it('a baseline from `summarize --layers` gives the same layer verdicts and intervals; one without the layers says so in one note', () => {
    const dir = mkdtempSync(join(tmpdir(), 'iterscope-layers-gate-'));
    const withLayers = join(dir, 'layers.json');
    const plain = join(dir, 'plain.json');
    expect(runCli(['summarize', at('vllm-a', 'trace.sqlite'), '--log', at('vllm-a', 'vllm.log'), '--layers', '-o', withLayers]).status).toBe(0);
    expect(runCli(['summarize', at('vllm-a', 'trace.sqlite'), '--log', at('vllm-a', 'vllm.log'), '-o', plain]).status).toBe(0);
    expect(JSON.parse(readFileSync(plain, 'utf8')).gate.layers).toBeUndefined();
    const view = (c: Comparison) => layerRows(c).map((m) => [m.scope, m.metric, m.verdict, m.interval, m.samples]);
    expect(view(compare(withLayers, 'slow', ['--layers']).c)).toEqual(view(compare('a', 'slow', ['--layers']).c));
    const without = compare(plain, 'slow', ['--layers']);
    expect(layerRows(without.c)).toEqual([]);
    expect(without.c.comparability).toEqual([expect.stringMatching(/^--layers: no layer samples in the base .*summarize --layers/)]);
    // An edited baseline whose layer samples are not numbers: one line naming the place, exit 2.
    const json = JSON.parse(readFileSync(withLayers, 'utf8'));
    json.gate.layers.phases.generation.samples['layer 0 per iteration'].points[0] = -1;
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, JSON.stringify(json));
    const r = runCli(['compare', broken, at('vllm-slow', 'trace.sqlite'), '--head-log', at('vllm-slow', 'vllm.log'), '--layers']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/malformed iterscope summary: gate\.layers\.phases\.generation\.samples\.layer 0 per iteration\.points\[0\] is -1, expected a non-negative number/);
  });

  it.skipIf(!hasCaptured('vllm-detailed'))('a different layer count (gate: 4, vllm-detailed: 8) takes the per-layer metrics off the gate with a note; module kinds still gated', () => {
    const { c } = compare('a', captured('vllm-detailed', 'trace.sqlite'), ['--layers'], captured('vllm-detailed', 'vllm.log'));
    expect(c.comparability).toContain('generation: layer counts differ (base 4, head 8): per-layer metrics are off the gate; module kinds and time outside layers are compared');
    const rows = layerRows(c).filter((m) => m.scope === 'generation');
    for (const m of rows.filter((x) => x.metric.startsWith('layer '))) {
      expect(m.gated, m.metric).toBe(false);
      expect(m.note).toBe('off the gate: layer counts differ in generation (base 4, head 8)');
    }
    expect(rows.filter((m) => m.metric.startsWith('layer '))).toHaveLength(8);
    for (const m of rows.filter((x) => !x.metric.startsWith('layer '))) expect(m.gated, m.metric).toBe(true);
    // Twice the layers, twice the attention per step.
    expect(metric(c, 'module attention per iteration').verdict).toBe('regressed');
  });

  it('plain a vs b (no step markers: kernel instances): --layers says in one note that there are no steps to split; exit 0', () => {
    const r = runCli(['compare', at('plain-a', 'trace.sqlite'), at('plain-b', 'trace.sqlite'), '--layers', '--format', 'json']);
    expect(r.status).toBe(0);
    const c = JSON.parse(r.stdout) as Comparison;
    expect(layerRows(c)).toEqual([]);
    expect(c.comparability.filter((n) => n.startsWith('--layers'))).toEqual(['--layers: the layer split is made per step, and the captures are compared without iterations: no per-layer metrics']);
  });
});
