import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Comparison } from '../../src/compare/compareRuns.js';
import { runCli } from '../helpers/cli.js';
import { captured, hasCaptured } from '../helpers/captured.js';

/**
 * The CI-gate set (`generator/capture.sh gate`): test/fixtures-captured/gate/ (README there), or
 * ../shared/fixtures/gate/ where that exists (`captured` prefers it). Skipped where neither is.
 */
const GATE = hasCaptured('gate', 'vllm-a/trace.sqlite');
const at = (run: string, file: string) => captured('gate', run, file);

function compare(kind: 'vllm' | 'plain', base: string, head: string, extra: string[] = []) {
  const inputs = kind === 'vllm' ? ['--base-log', at(`vllm-${base}`, 'vllm.log'), '--head-log', at(`vllm-${head}`, 'vllm.log')] : ['--base-benchmark', at(`plain-${base}`, 'benchmark_results.json'), '--head-benchmark', at(`plain-${head}`, 'benchmark_results.json')];
  const r = runCli(['compare', at(`${kind}-${base}`, 'trace.sqlite'), at(`${kind}-${head}`, 'trace.sqlite'), ...inputs, '--format', 'json', ...extra]);
  return { ...r, c: JSON.parse(r.stdout) as Comparison };
}
const verdict = (c: Comparison, metric: string, scope: string) => c.metrics.find((m) => m.metric === metric && m.scope === scope)!;

describe.skipIf(!GATE)('the CI-gate captures (same workload twice, and once with one more RMS norm per layer)', () => {
  it('vLLM-style a vs b: exit 0, nothing regressed; the 7 mixed iterations are named inconclusive with their counts', () => {
    const { status, stderr, c } = compare('vllm', 'a', 'b');
    expect(status).toBe(0);
    expect(c.basis).toBe('iterations');
    expect(c.regressions).toEqual([]);
    expect(stderr).toMatch(/inconclusive: 11 metrics \(GPU busy per iteration, .*\) \[mixed\]: too few samples \(base 7, head 7; 10 a side at least\)/);
    for (const m of c.metrics.filter((x) => x.gated && x.scope === 'generation')) expect(m.verdict, m.metric).toBe('unchanged');
  });

  it('vLLM-style a vs slow: exit 1 on norm time and kernels per iteration in generation, intervals excluding zero; the other categories unchanged', () => {
    const { status, stderr, c } = compare('vllm', 'a', 'slow');
    expect(status).toBe(1);
    expect(stderr).toMatch(/^iterscope: regression: kernels per iteration \[generation\] \+6\.3% \(\+6\.3%\.\.\+6\.3%\); norm per iteration \[generation\] \+39\.\d% \(\+3\d\.\d%\.\.\+\d\d\.\d%\)\n$/m);
    const norm = verdict(c, 'norm per iteration', 'generation');
    expect(norm.samples).toEqual({ base: 53, head: 53 });
    expect(norm.interval!.lo).toBeGreaterThan(0.35);
    // Elementwise time grows 4%, under the 5% threshold and a few us per iteration, under the 10 us
    // floor: unchanged; regressed at 3% with a 1 us floor.
    const elementwise = verdict(c, 'elementwise per iteration', 'generation');
    expect(elementwise.interval!.lo).toBeGreaterThan(0.03);
    expect(elementwise.interval!.hi).toBeLessThan(0.05);
    expect(elementwise.verdict).toBe('unchanged');
    for (const cat of ['attention', 'gemm', 'activation', 'rope', 'sampling', 'reduce']) expect(verdict(c, `${cat} per iteration`, 'generation').verdict, cat).toBe('unchanged');
    expect(Math.abs(elementwise.floorDeltaNs)).toBeLessThan(10_000);
    const strict = compare('vllm', 'a', 'slow', ['--threshold', '3%', '--min-delta', '1us']);
    expect(verdict(strict.c, 'elementwise per iteration', 'generation').verdict).toBe('regressed');
  });

  it('plain a vs b: exit 0 on kernel instances per generated token, nothing regressed', () => {
    const { status, c } = compare('plain', 'a', 'b');
    expect(status).toBe(0);
    expect(c.basis).toBe('kernel instances');
    expect(c.regressions).toEqual([]);
    expect(verdict(c, 'kernels per generated token', 'span').relative).toBe(0);
  });

  it('plain a vs slow: exit 1 on norm time and kernels per generated token, intervals excluding zero; gemm, attention, rope, reduce unchanged', () => {
    const { status, c } = compare('plain', 'a', 'slow');
    expect(status).toBe(1);
    const norm = verdict(c, 'norm time per generated token', 'span');
    expect(norm.verdict).toBe('regressed');
    expect(norm.samples).toEqual({ base: 1125, head: 1625 });
    expect(norm.interval!.lo).toBeGreaterThan(0.35);
    const kernels = verdict(c, 'kernels per generated token', 'span');
    expect(kernels.verdict).toBe('regressed');
    expect(kernels.relative).toBeCloseTo(1500 / 23276, 12);
    for (const cat of ['gemm', 'attention', 'rope', 'reduce']) expect(verdict(c, `${cat} time per generated token`, 'span').verdict, cat).toBe('unchanged');
    // Elementwise +3.9%: an interval across +5% (inconclusive), above 0.
    const elementwise = verdict(c, 'elementwise time per generated token', 'span');
    expect(elementwise.interval!.lo).toBeGreaterThan(0);
    expect(elementwise.verdict).toBe('inconclusive');
  });

  it('a baseline summarized from vllm-a gives the verdicts and intervals of vllm-a itself', () => {
    const baseline = join(mkdtempSync(join(tmpdir(), 'iterscope-gate-')), 'baseline.json');
    expect(runCli(['summarize', at('vllm-a', 'trace.sqlite'), '--log', at('vllm-a', 'vllm.log'), '-o', baseline]).status).toBe(0);
    const r = runCli(['compare', baseline, at('vllm-slow', 'trace.sqlite'), '--head-log', at('vllm-slow', 'vllm.log'), '--format', 'json']);
    expect(r.status).toBe(1);
    const view = (c: Comparison) => c.metrics.map((m) => [m.scope, m.metric, m.verdict, m.interval, m.samples]);
    expect(view(JSON.parse(r.stdout) as Comparison)).toEqual(view(compare('vllm', 'a', 'slow').c));
  });

  it('every gate capture against itself: exit 0', () => {
    for (const run of ['vllm-a', 'vllm-b', 'vllm-slow', 'plain-a', 'plain-b', 'plain-slow']) {
      const r = runCli(['compare', at(run, 'trace.sqlite'), at(run, 'trace.sqlite'), '--format', 'json']);
      expect(r.status, run).toBe(0);
      expect((JSON.parse(r.stdout) as Comparison).regressions, run).toEqual([]);
    }
  });
});
