import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';

const cases: [string, string, string][] = [
  ['pytorch-dense', 'trace.sqlite', 'nvtx_gpu_proj_sum.csv'],
  ['pytorch-moe-window', 'trace.sqlite', 'nvtx_gpu_proj_sum.csv'],
  ['sglang', 'trace.sqlite', 'nvtx_gpu_proj_sum.csv'],
  ['cpp-legacy-windows', 'trace.1.sqlite', '1.nvtx_gpu_proj_sum.csv'],
  ['cpp-legacy-windows', 'trace.2.sqlite', '2.nvtx_gpu_proj_sum.csv'],
];

describe('iterscope nvtx --gpu (CLI) prints nsys\'s nvtx_gpu_proj_sum CSV byte for byte', () => {
  for (const [dir, file, oracle] of cases) {
    it(`${dir}/${file}`, () => {
      const r = runCli(['nvtx', '--gpu', fixture(dir, file), '--format', 'csv']);
      expect(r.status).toBe(0);
      expect(r.stdout).toBe(readFileSync(fixture(dir, 'nsys-stats', oracle), 'utf8'));
    });
  }
  it('says what it could not project (graph-level traces)', () => {
    const r = runCli(['nvtx', '--gpu', fixture('cpp-legacy-windows', 'trace.2.sqlite'), '--format', 'csv']);
    expect(r.stderr).toMatch(/whole-graph launches .* not projected/);
  });
});
