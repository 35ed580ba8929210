/**
 * The CLI on Kineto traces: analysis commands accept one; truncated or non-Kineto JSON, a damaged
 * gzip and an .nsys-rep give one line naming the file and exit 2. Runs the built CLI (dist/).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture } from '../helpers/fixtures.js';
import { runCli, type CliResult } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'iterscope-kineto-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const TRACE = fixture('pytorch-torch-only', 'trace.json');

function expectOneLineError(r: CliResult, path: string, problem: RegExp): void {
  expect(r.stdout).toBe('');
  expect(r.stderr).not.toMatch(/^\s+at /m);
  const lines = r.stderr.replace(/\n$/, '').split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0].startsWith(`iterscope: ${path}: `), lines[0]).toBe(true);
  expect(lines[0]).toMatch(problem);
  expect(r.status, r.stderr).toBe(2);
}

describe('bad Kineto input: one line, exit 2', () => {
  const cases: [string, string, RegExp][] = [];
  beforeAll(() => {
    const real = readFileSync(TRACE);
    const p = (n: string) => join(dir, n);
    writeFileSync(p('truncated.json'), real.subarray(0, 1024 * 1024));
    writeFileSync(p('other.json'), JSON.stringify({ name: 'package', version: '1.0.0', dependencies: { a: '1' } }));
    writeFileSync(p('array.json'), '[{"ph": "X", "ts": 1}]');
    const z = gzipSync(real);
    writeFileSync(p('cut.json.gz'), z.subarray(0, z.length >> 1));
    writeFileSync(p('broken-event.json'), '{"baseTimeNanoseconds": 1, "traceEvents": [{"ph": "X", "ts": 1,, "dur": 2}]}');
    writeFileSync(p('run.nsys-rep'), Buffer.from('not sqlite, a report'));
    cases.push(
      [p('truncated.json'), 'the first 1 MB of a real trace', /truncated: the file ends inside traceEvents/],
      [p('other.json'), 'JSON that is not a trace', /not a PyTorch profiler \(Kineto\) trace/],
      [p('array.json'), 'a JSON array', /not a JSON object/],
      [p('cut.json.gz'), 'half of a gzipped trace', /(gzip data is damaged or truncated|truncated)/],
      [p('broken-event.json'), 'an event that is not JSON', /malformed JSON in traceEvents element 1/],
      [p('run.nsys-rep'), 'an .nsys-rep report', /nsys export --type sqlite/],
    );
  });

  it.each(['kernels', 'iterations'])('%s', (command) => {
    expect(cases).toHaveLength(6);
    for (const [path, what, problem] of cases) {
      try {
        expectOneLineError(runCli([command, path, '--format', 'csv']), path, problem);
      } catch (err) {
        throw new Error(`${command} on ${what}: ${(err as Error).message}`);
      }
    }
  });
});

describe('analysis commands accept a Kineto trace', () => {
  it('kernels lists the kernels with their nsys-style columns', () => {
    const r = runCli(['kernels', TRACE, '--format', 'csv']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Time \(%\),Total Time \(ns\),Instances/);
    expect(r.stdout).toMatch(/nvjet_sm90_tst_128x16_64x11_4x1_v_bz_TNT/);
  });

  it('iterations without --log names the options that give iterations', () => {
    const r = runCli(['iterations', TRACE, '--format', 'csv']);
    expectOneLineError(r, TRACE, /pass --log with IterationStats records .*--log-tz/);
  });

  it('gaps runs on it', () => {
    const r = runCli(['gaps', TRACE, '--format', 'csv']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.length).toBeGreaterThan(50);
  });
});
