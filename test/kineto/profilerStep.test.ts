/**
 * A small Kineto trace as vLLM / SGLang write them (`profiler.step()`: ProfilerStep#N annotations),
 * built here event by event: iterations come from the ProfilerStep#N ranges, kernels are placed by
 * their launch call, and a `.json.gz` copy reads the same. Opening a trace runs the built converter.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { analyzeIterations } from '../../src/iterations/analyzeIterations.js';
import { analyzeAtenOps } from '../../src/kineto/atenOps.js';
import { LoadedExport } from '../../src/load/loadedExport.js';

const dir = mkdtempSync(join(tmpdir(), 'iterscope-kineto-steps-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Steps 5..7, 1 ms apart from ts 1000 us: each an aten::mm launching one 10 us kernel. */
function stepsTrace(): string {
  const events: unknown[] = [
    { name: 'process_name', ph: 'M', ts: 0, pid: 100, tid: 0, args: { name: 'python3' } },
    { name: 'thread_name', ph: 'M', ts: 0, pid: 100, tid: 100, args: { name: 'thread 100 (python3)' } },
  ];
  for (let k = 0; k < 3; k++) {
    const t = 1000 + k * 1000;
    const corr = 10 + k;
    events.push(
      { ph: 'X', cat: 'user_annotation', name: `ProfilerStep#${5 + k}`, pid: 100, tid: 100, ts: t, dur: 900 },
      { ph: 'X', cat: 'cpu_op', name: 'aten::mm', pid: 100, tid: 100, ts: t + 100, dur: 50, args: { 'External id': corr } },
      { ph: 'X', cat: 'cuda_runtime', name: 'cudaLaunchKernel', pid: 100, tid: 100, ts: t + 120.5, dur: 10.25, args: { correlation: corr, 'External id': corr } },
      { ph: 'X', cat: 'kernel', name: 'void gemm<1>(float*)', pid: 0, tid: 7, ts: t + 200.001, dur: 10, args: { correlation: corr, device: 0, stream: 7, context: 1, grid: [1, 1, 1], block: [128, 1, 1] } },
      { ph: 's', id: corr, pid: 100, tid: 100, ts: t + 120.5, cat: 'ac2g', name: 'ac2g' },
    );
  }
  return JSON.stringify({ schemaVersion: 1, deviceProperties: [{ id: 0, name: 'GPU', numSms: 1 }], baseTimeNanoseconds: 1790857026000000000, traceEvents: events }).replace(
    '"baseTimeNanoseconds":1790857026000000000',
    '"baseTimeNanoseconds": 1790857026000000000',
  );
}

describe('ProfilerStep#N marks the iterations of a Kineto trace', () => {
  const text = stepsTrace();
  const plain = join(dir, 'steps.json');
  const gz = join(dir, 'steps.json.gz');
  writeFileSync(plain, text);
  writeFileSync(gz, gzipSync(text));

  it.each([
    ['json', plain],
    ['json.gz', gz],
  ])('%s: iterations 5..7 from the steps, one 10 us kernel and one attributed launch each', (_kind, file) => {
    const { a, host } = withExport(file, (h) => {
      const a = analyzeIterations(new LoadedExport(h));
      return { a, host: analyzeAtenOps(new LoadedExport(h), a.iterations) };
    });
    expect(a.iterations.map((r) => r.iter)).toEqual([5, 6, 7]);
    expect(a.iterations.map((r) => r.kernelNs)).toEqual([10_000, 10_000, 10_000]);
    expect(a.iterations.map((r) => r.startNs)).toEqual([0, 1_000_000, 2_000_000]);
    expect(a.coverage.notes[0]).toMatch(/ProfilerStep#N/);
    expect(host.iterations.map((r) => [r.launchCalls, r.attributedLaunchCalls, r.topOps[0]?.name, r.topOps[0]?.selfNs])).toEqual([
      [1, 1, 'aten::mm', 50_000],
      [1, 1, 'aten::mm', 50_000],
      [1, 1, 'aten::mm', 50_000],
    ]);
    // First op (100 us into the step) to the kernel's GPU start (200.001 us): 100.001 us.
    expect(host.iterations.map((r) => r.firstOpToFirstKernelNs)).toEqual([100_001, 100_001, 100_001]);
    expect(host.iterations[0].gpuTimeByOp).toEqual([{ name: 'aten::mm', kernelNs: 10_000, kernels: 1 }]);
  });
});
