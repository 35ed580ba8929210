import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { registerMetrics, runMetrics } from '../../src/cli/commands/metrics.js';
import { UsageError } from '../../src/errors.js';
import { withExport } from '../../src/export/openExport.js';
import { metricsOverCapture } from '../../src/metrics/distribution.js';
import { metricCells, metricColumns, metricsTable } from '../../reports/metricsReport.js';
import { fixture } from '../helpers/fixtures.js';
import { LoadedExport } from '../../src/load/loadedExport.js';

const file = fixture('pytorch-gpu-metrics', 'trace.sqlite');
const log = fixture('pytorch-gpu-metrics', 'iteration_log.txt');
const dir = mkdtempSync(join(tmpdir(), 'iterscope-metrics-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SMS = 'SMs Active [Throughput %]';

/** Runs `iterscope metrics ...args` in-process; returns what went to stderr. */
async function run(args: string[]): Promise<string> {
  const program = new Command('iterscope').exitOverride();
  registerMetrics(program);
  for (const c of program.commands) c.exitOverride();
  await program.parseAsync(['node', 'iterscope', 'metrics', ...args]);
  return stderr.join('');
}

let stderr: string[] = [];
beforeEach(() => {
  stderr = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr.push(String(chunk));
    return true;
  });
});
afterEach(() => vi.restoreAllMocks());

describe('iterscope metrics', () => {
  it('JSON: every metric over the whole capture, with its time-weighted mean, p50, p90, max', async () => {
    const out = join(dir, 'capture.json');
    await run([file, '--format', 'json', '-o', out]);
    const data = JSON.parse(readFileSync(out, 'utf8'));
    expect(data.available).toBe(true);
    expect(data.scope.kind).toBe('capture');
    expect(data.iterations).toBeNull();
    expect(data.metrics).toHaveLength(22);
    const sms = data.metrics.find((m: { metric: string }) => m.metric === SMS);
    expect(sms.mean).toBeCloseTo(0.6477, 3);
    expect(sms).toMatchObject({ gpuId: 0, gpuName: 'NVIDIA H100 80GB HBM3', p50: 0, p90: 0, max: 70 });
    expect(stderr.join('')).toContain('GPC Clock Frequency [MHz], SYS Clock Frequency [MHz]: stored in Hz, reported in MHz');
  });

  it('CSV over the windows of iterations 10-19: one row per metric', async () => {
    const out = join(dir, 'iters.csv');
    const err = await run([file, '--iters', '10-19', '--log', log, '--metric', 'SMs Active', '--metric', 'Tensor Active', '-o', out]);
    const lines = readFileSync(out, 'utf8').trim().split('\n');
    expect(lines[0]).toBe('GPU,Metric,Mean,p50,p90,Min,Max,Samples,Covered (ns)');
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(/^0,SMs Active \[Throughput %\],/);
    expect(err).toContain('over the windows of iterations 10..19');
    const direct = runMetrics(file, { iters: '10-19', metric: ['SMs Active'] });
    expect(direct.iterations).toEqual([10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    const mean = Number(lines[1].split(',')[2]);
    expect(mean).toBeCloseTo(direct.metrics[0].mean!, 6);
    expect(mean).toBeGreaterThan(5);
  });

  it('an export without metrics prints an empty table and a note, no error', async () => {
    const out = join(dir, 'dense.csv');
    const err = await run([fixture('pytorch-dense', 'trace.sqlite'), '--iters', '0-5', '--format', 'csv', '-o', out]);
    expect(readFileSync(out, 'utf8').trim()).toBe('GPU,Metric,Mean,p50,p90,Min,Max,Samples,Covered (ns)');
    expect(err).toContain('no GPU metrics in this export');
  });

  it('bad --iters, --gpu and unknown iterations are usage errors', async () => {
    await expect(run([file, '--iters', 'ten'])).rejects.toThrow(UsageError);
    await expect(run([file, '--gpu', 'x'])).rejects.toThrow(/--gpu expects a non-negative integer/);
    await expect(run([file, '--gpu', '3'])).rejects.toThrow(/GPU 3: that GPU was not sampled|--gpu 3: that GPU was not sampled/);
    await expect(run([file, '--iters', '200-300'])).rejects.toThrow(/no such iterations .*found 0\.\.59/);
  });
});

describe('report tables', () => {
  it('metricsTable and the iteration/phase metric columns', () => {
    const s = withExport(file, (h) => metricsOverCapture(new LoadedExport(h), { metrics: ['SMs Active', 'GPC Clock Frequency'] }));
    const t = metricsTable(s);
    expect(t.title).toContain('whole capture');
    expect(t.rows.map((r) => r.metric)).toEqual([SMS, 'GPC Clock Frequency [MHz] (from Hz)']);
    const cols = metricColumns([SMS, 'GPC Clock Frequency [MHz]']);
    expect(cols.map((c) => [c.header, c.kind])).toEqual([
      ['SMs Active (%)', 'percent'],
      ['GPC Clock Frequency (MHz)', 'float'],
    ]);
    expect(metricCells({ [SMS]: 12.5 }, [SMS, 'GPC Clock Frequency [MHz]'])).toEqual({ [`metric:${SMS}`]: 12.5, 'metric:GPC Clock Frequency [MHz]': null });
  });
});
