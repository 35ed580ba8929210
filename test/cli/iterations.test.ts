import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { fixture, REPO_ROOT } from '../helpers/fixtures.js';

const sample = join(REPO_ROOT, 'sample-data', 'moe-loops-100-119.sqlite');
const sampleLog = join(REPO_ROOT, 'sample-data', 'moe-iteration_log.txt');

describe('iterscope iterations (CLI)', () => {
  it('prints JSON rows with the documented camelCase fields', () => {
    const r = runCli(['iterations', sample, '--log', sampleLog, '--format', 'json']);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.iterations.map((x: { iter: number }) => x.iter)).toEqual(Array.from({ length: 20 }, (_, i) => 100 + i));
    for (const key of ['iter', 'startNs', 'endNs', 'wallNs', 'gpuBusyNs', 'gpuIdleNs', 'kernelNs', 'kernelCount', 'categoryNs', 'log', 'matched']) {
      expect(out.iterations[0]).toHaveProperty(key);
    }
    expect(out.iterations[0].log.contextRequests).toBe(out.iterations[0].contextRequests);
    // How many were joined and which log records fell outside the capture, on stderr.
    expect(r.stderr).toContain('20 of 20 iterations joined');
    expect(r.stderr).toContain('log records outside the capture: 0..99, 120..149');
  });

  it('CSV has one row per iteration and a column per used category', () => {
    const r = runCli(['iterations', sample, '--format', 'csv']);
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(21);
    expect(lines[0]).toContain('gemm (ns)');
    expect(lines[0]).toContain('moe_routing (ns)');
  });

  it('--summary aggregates by phase', () => {
    const r = runCli(['iterations', fixture('pytorch-dense', 'trace.sqlite'), '--log', fixture('pytorch-dense', 'iteration_log.txt'), '--summary', '--format', 'json']);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    const phases = out.phases.map((p: { phase: string }) => p.phase);
    expect(phases).toEqual(expect.arrayContaining(['context', 'mixed', 'generation']));
    const total = out.phases.reduce((a: number, p: { iterations: number }) => a + p.iterations, 0);
    expect(total).toBe(120);
    const gen = out.phases.find((p: { phase: string }) => p.phase === 'generation');
    expect(gen.p50GpuBusyNs).toBeLessThanOrEqual(gen.p90GpuBusyNs);
    expect(gen.p90GpuBusyNs).toBeLessThanOrEqual(gen.p99GpuBusyNs);
    expect(gen.gpuNsPerGenerationRequest).toBeGreaterThan(0);
  });

  it('bad options are usage errors: one line, exit 2', () => {
    const cases: string[][] = [
      ['iterations', sample, '--iteration-range', '/(unclosed/'],
      ['iterations', sample, '--first-iter', 'ten'],
      ['iterations', sample, '--profile-range', '50-40'],
      ['iterations', sample, '--log', join(tmpdir(), 'no-such-log-iterscope.txt')],
    ];
    const dir = mkdtempSync(join(tmpdir(), 'iterscope-cli-'));
    const badRules = join(dir, 'rules.json');
    writeFileSync(badRules, '[{"category": "x"');
    cases.push(['iterations', sample, '--categories', badRules]);
    for (const args of cases) {
      const r = runCli(args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('SQL metacharacters in --iteration-range are data, not SQL', () => {
    const r = runCli(['iterations', sample, '--iteration-range', "x' OR 1=1; DROP TABLE StringIds; --"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('no NVTX ranges match');
  });

  it('an export without iteration ranges says which option to pass', () => {
    const r = runCli(['iterations', fixture('external', 'nsys2024.6_nvfuser_matmul.sqlite')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/pass --iteration-range/);
    const none = runCli(['iterations', fixture('external', 'nsys2025.5.2_cudagraph_flameox.sqlite')]);
    expect(none.status).toBe(2);
    expect(none.stderr).toMatch(/no NVTX events/);
  });

  it('`categories` prints the rule table', () => {
    const r = runCli(['categories', '--format', 'json']);
    expect(r.status).toBe(0);
    const rules = JSON.parse(r.stdout);
    expect(rules[rules.length - 1]).toEqual({ category: 'other', pattern: '.*' });
  });
});
