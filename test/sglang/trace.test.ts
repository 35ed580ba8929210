/**
 * `trace` on SGLang captures: iteration slices named by the batch of the log line each step was
 * joined to, and, where no line says, by the capture order and the phase told from the launches.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';

const NSYS = fixture('sglang', 'trace.sqlite');
const LOG = fixture('sglang', 'sglang.log');

interface Slice {
  name: string;
  cat?: string;
  args: Record<string, unknown>;
}

function iterationSlices(args: string[]): Slice[] {
  const dir = mkdtempSync(join(tmpdir(), 'iterscope-sglang-trace-'));
  const out = join(dir, 'trace.json');
  const r = runCli(['trace', NSYS, ...args, '-o', out]);
  expect(r.status).toBe(0);
  return (JSON.parse(readFileSync(out, 'utf8')).traceEvents as Slice[]).filter((e) => e.cat === 'iteration');
}

describe('trace on sglang/', () => {
  const lines = readFileSync(LOG, 'utf8').trimEnd().split('\n');

  it('with the log: one slice per step, named by its log line\'s batch', () => {
    const slices = iterationSlices(['--log', LOG]);
    expect(slices).toHaveLength(80);
    slices.forEach((s, k) => {
      const step = 40 + k;
      const p = /Prefill batch, #new-seq: (\d+), #new-token: (\d+),/.exec(lines[step]);
      const d = /Decode batch, #running-req: (\d+),/.exec(lines[step]);
      expect(s.name).toBe(p ? `iter ${step}: ${p[1]} ctx (${p[2]} tok), 0 gen` : `iter ${step}: 0 ctx, ${d![1]} gen`);
      expect(s.args.captureOrder).toBeUndefined();
    });
  });

  it('with a sparse log: capture steps, each named by the phase its launches told', () => {
    const dir = mkdtempSync(join(tmpdir(), 'iterscope-sglang-trace-log-'));
    let decodes = 0;
    const sparse = join(dir, 'sparse.log');
    writeFileSync(sparse, lines.filter((l) => !l.includes('Decode batch') || ++decodes % 40 === 0).join('\n'));
    const slices = iterationSlices(['--log', sparse]);
    slices.forEach((s, k) => {
      const phase = lines[40 + k].includes('Prefill') ? 'context' : 'generation';
      expect(s.name).toBe(`capture step ${k}: ${phase} (from launches)`);
      expect(s.args).toMatchObject({ captureOrder: true, phaseBasis: 'launches', phase });
    });
  });
});
