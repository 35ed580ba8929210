/**
 * `LoopCompilation`: V8's `--no-concurrent-osr`, set once, by the CLI's process only, when the
 * threads that compute at once fill every core (src/load/loopCompilation.ts says why). The policy
 * over a fake setter; where the NVTX worker and the export pool consult it (pytorch-dense,
 * pytorch-tp2); and the flag as the running Node's V8 takes it (a flag V8 does not know would
 * print an error line on every run).
 */
import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { LoopCompilation, loopCompilation } from '../../src/load/loopCompilation.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import { analyzeMany } from '../../src/ranks/pool.js';
import { fixture, REPO_ROOT } from '../helpers/fixtures.js';
import { join } from 'node:path';

/** A policy on a machine with `cores` cores, and the flags it set. */
function policy(cores: number): { p: LoopCompilation; set: string[] } {
  const set: string[] = [];
  return { p: new LoopCompilation((f) => set.push(f), () => cores), set };
}

describe('LoopCompilation', () => {
  it('sets nothing in a process that did not enable it (a library import), however many threads compute', () => {
    const { p, set } = policy(2);
    expect(p.beforeComputeThreads(2)).toBe(false);
    expect(p.beforeComputeThreads(64)).toBe(false);
    expect(set).toEqual([]);
  });

  it('sets nothing while a core is left free', () => {
    const { p, set } = policy(4);
    p.enable();
    expect(p.beforeComputeThreads(2)).toBe(false);
    expect(p.beforeComputeThreads(3)).toBe(false);
    expect(set).toEqual([]);
  });

  it('sets --no-concurrent-osr once the computing threads are at least the cores, and never again', () => {
    const { p, set } = policy(2);
    p.enable();
    expect(p.beforeComputeThreads(1)).toBe(false);
    expect(p.beforeComputeThreads(2)).toBe(true);
    expect(set).toEqual(['--no-concurrent-osr']);
    // Set for the process: later analyses (fewer threads too) find it set, and nothing is set back.
    expect(p.beforeComputeThreads(1)).toBe(true);
    expect(p.beforeComputeThreads(8)).toBe(true);
    expect(set).toEqual(['--no-concurrent-osr']);
  });

  it('on one core, a single computing thread fills it', () => {
    const { p, set } = policy(1);
    p.enable();
    expect(p.beforeComputeThreads(1)).toBe(true);
    expect(set).toEqual(['--no-concurrent-osr']);
  });
});

describe('who consults the policy', () => {
  afterEach(() => vi.restoreAllMocks());

  it('the NVTX worker, as it starts beside this thread (two threads compute)', () => {
    const spy = vi.spyOn(loopCompilation, 'beforeComputeThreads');
    const a = withExport(fixture('pytorch-dense', 'trace.sqlite'), (h) => analyzeExport(h, { parts: ['iterations', 'gaps'], nvtxRead: 'background' }));
    expect(a.iterations?.iterations.length).toBeGreaterThan(0);
    expect(spy.mock.calls).toEqual([[2]]);
  });

  it('no worker, no call: the NVTX read on this thread', () => {
    const spy = vi.spyOn(loopCompilation, 'beforeComputeThreads');
    withExport(fixture('pytorch-dense', 'trace.sqlite'), (h) => analyzeExport(h, { parts: ['iterations', 'gaps'], nvtxRead: 'inline' }));
    expect(spy).not.toHaveBeenCalled();
  });

  it('the export pool, with the workers it starts', async () => {
    const spy = vi.spyOn(loopCompilation, 'beforeComputeThreads');
    const files = [fixture('pytorch-tp2', 'trace.rank0.sqlite'), fixture('pytorch-tp2', 'trace.rank1.sqlite')];
    await analyzeMany(files, 'rankFigures', { jobs: 2 });
    expect(spy.mock.calls).toEqual([[2]]);
    spy.mockClear();
    await analyzeMany(files, 'rankFigures', { inProcess: true });
    expect(spy).not.toHaveBeenCalled();
  });
});

describe('the flag, as this Node takes it', () => {
  it('is one of its V8 options', () => {
    const r = spawnSync(process.execPath, ['--v8-options'], { encoding: 'utf8' });
    expect(r.stdout).toMatch(/^\s+--concurrent-osr\b/m);
  });

  it('the default setter records the flags in ITERSCOPE_V8_FLAGS, which a worker started after inherits', () => {
    const built = join(REPO_ROOT, 'dist', 'src', 'load', 'loopCompilation.js');
    const script = [
      `import { setRuntimeV8Flags, RUNTIME_V8_FLAGS_ENV } from ${JSON.stringify(built)};`,
      "import { Worker } from 'node:worker_threads';",
      "setRuntimeV8Flags('--no-concurrent-osr');",
      "new Worker(`process.stdout.write(process.env[${JSON.stringify(RUNTIME_V8_FLAGS_ENV)}] ?? 'unset')`, { eval: true });",
    ].join('\n');
    const env = { ...process.env };
    delete env.ITERSCOPE_V8_FLAGS;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('--no-concurrent-osr');
  });

  it('set at run time, it prints nothing and the process goes on', () => {
    const r = spawnSync(process.execPath, ['-e', "require('node:v8').setFlagsFromString('--no-concurrent-osr'); let s = 0; for (let i = 0; i < 1e7; i++) s += i; console.log(s)"], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe(String((1e7 * (1e7 - 1)) / 2));
  });
});
