import { describe, expect, it } from 'vitest';
import { compareRuns, type Comparison } from '../../src/compare/compareRuns.js';
import { withExport } from '../../src/export/openExport.js';
import { summarizeExport, type RunSummary } from '../../src/summary/runSummary.js';
import { runCli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';

const summarize = (file: string): RunSummary => withExport(file, (h) => summarizeExport(h));
const metric = (c: Comparison, name: string, scope: string) => c.metrics.find((m) => m.metric === name && m.scope === scope)!;

describe('compare on iterations by phase', () => {
  it('pytorch-moe-window vs the perfect router: the routing kernels regress in generation with a tight interval; 8 mixed iterations are inconclusive', () => {
    const r = runCli(['compare', fixture('pytorch-moe-window', 'trace.sqlite'), fixture('pytorch-moe-perfect-router', 'trace.sqlite'), '--format', 'json']);
    expect(r.status).toBe(1);
    // The one regression the samples support; the old mean-threshold gate also flagged the 8 mixed
    // iterations (+16.6%), all phases together and the generation idle share (+9.5%).
    expect(r.stderr).toMatch(/iterscope: regression: moe_routing per iteration \[generation\] \+29\.4% \(\+2\d\.\d%\.\.\+3\d\.\d%\)\n$/);
    const c = JSON.parse(r.stdout) as Comparison;
    expect(c.basis).toBe('iterations');
    expect(c.regressions.map((m) => `${m.metric} [${m.scope}]`)).toEqual(['moe_routing per iteration [generation]']);
    const routing = metric(c, 'moe_routing per iteration', 'generation');
    expect(routing.samples).toEqual({ base: 42, head: 42 });
    expect(routing.interval!.lo).toBeGreaterThan(0.2);
    expect(routing.interval!.hi).toBeLessThan(0.4);
    const idle = metric(c, 'idle share', 'generation');
    expect(idle.verdict).toBe('inconclusive');
    expect(idle.interval!.lo).toBeLessThan(0.05);
    expect(idle.interval!.hi).toBeGreaterThan(0.05);
    const mixed = metric(c, 'moe_routing per iteration', 'mixed');
    expect(mixed.verdict).toBe('inconclusive');
    expect(mixed.note).toBe('too few samples (base 8, head 8; 10 a side at least)');
    // All phases together: shown, never gated.
    expect(metric(c, 'moe_routing per iteration', 'all').gated).toBe(false);
    expect(metric(c, 'moe_routing per iteration', 'all').verdict).toBeNull();
    expect(metric(c, 'gemm per iteration', 'generation').verdict).toBe('unchanged');
  });

  it('every capture against itself, and against its summary read back from JSON: no regression, the same verdicts', () => {
    const files = [
      fixture('sglang', 'trace.sqlite'),
      fixture('cpp-legacy-windows', 'trace.2.sqlite'),
      fixture('pytorch-tp2', 'trace.rank0.sqlite'),
      fixture('vllm-dense', 'trace.sqlite'),
      fixture('external', 'nsys2025.5.2_cudagraph_flameox.sqlite'),
      fixture('external', 'nsys2024.5_cloverleaf_pipit.sqlite'),
    ];
    for (const f of files) {
      const s = summarize(f);
      const c = compareRuns(s, s);
      expect(c.regressions, f).toEqual([]);
      for (const m of c.metrics.filter((x) => x.gated)) expect(['unchanged', 'inconclusive'], `${f}: ${m.metric} [${m.scope}]`).toContain(m.verdict);
      const back = JSON.parse(JSON.stringify(s)) as RunSummary;
      const view = (x: Comparison) => x.metrics.map((m) => [m.scope, m.metric, m.verdict, m.interval]);
      expect(view(compareRuns(back, s)), f).toEqual(view(c));
    }
  });

  it('a graph-level trace against a node-level one: the kernel counts leave the gate, with a note', () => {
    const graph = summarize(fixture('cpp-legacy-windows', 'trace.2.sqlite'));
    const node = summarize(fixture('vllm-dense', 'trace.sqlite'));
    expect([node.capture.graphTrace, graph.capture.graphTrace]).toEqual(['node', 'graph']);
    const c = compareRuns(node, graph);
    expect(c.basis).toBe('kernel instances');
    expect(c.comparability).toContain('CUDA-graph trace differs (base node, head graph): kernel counts and per-kernel figures are not comparable and are off the gate');
    const counts = c.metrics.filter((m) => m.metric === 'kernels per second' || m.metric.endsWith(' per instance'));
    expect(counts.length).toBeGreaterThan(0);
    for (const m of counts) {
      expect(m.gated).toBe(false);
      expect(m.note).toMatch(/^off the gate: /);
    }
  });

  it('iterations without a phase in common: nothing is gated, and the note says why', () => {
    const c = compareRuns(summarize(fixture('pytorch-dense', 'trace.sqlite')), summarize(fixture('cpp-legacy-windows', 'trace.2.sqlite')));
    expect(c.basis).toBe('iterations');
    expect(c.comparability.some((n) => n.startsWith('no phase in common (base context, mixed, generation; head unknown;'))).toBe(true);
    expect(c.metrics.filter((m) => m.gated)).toEqual([]);
  });
});
