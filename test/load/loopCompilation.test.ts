/**
 * `LoopCompilation`: V8's `--no-concurrent-osr` when the threads that compute at once fill every
 * core (src/v8/loopCompilation.ts says why): set once for good in the CLI's process, for the span
 * of one analysis in a library program. The policy over a fake setter; where the NVTX worker and
 * the export pool consult it (pytorch-dense, pytorch-tp2); and the flag as the running Node's V8
 * takes it (a flag V8 does not know would print an error line on every run).
 */
import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { LoopCompilation, loopCompilation } from '../../src/v8/loopCompilation.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import { analyzeMany } from '../../src/ranks/pool.js';
import { fixture, REPO_ROOT } from '../helpers/fixtures.js';
import { join } from 'node:path';
import { availableParallelism } from 'node:os';

/** A policy on a machine with `cores` cores (on the main thread unless `main` is false), and the flags it set. */
function policy(cores: number, main = true): { p: LoopCompilation; set: string[] } {
  const set: string[] = [];
  return { p: new LoopCompilation((f) => set.push(f), () => cores, () => main), set };
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

describe('LoopCompilation for one analysis (a library program: neither enabled nor disabled)', () => {
  it('sets the flag as the NVTX worker starts beside the main thread on two cores, and sets it back once when the worker is let go', () => {
    const { p, set } = policy(2);
    const back = p.forAnalysisThreads(2);
    expect(set).toEqual(['--no-concurrent-osr']);
    back();
    back();
    expect(set).toEqual(['--no-concurrent-osr', '--concurrent-osr']);
    // The next analysis sets it again, for its own span.
    p.forAnalysisThreads(2)();
    expect(set).toEqual(['--no-concurrent-osr', '--concurrent-osr', '--no-concurrent-osr', '--concurrent-osr']);
  });

  it('an analysis inside one in progress leaves the flag to the outer one', () => {
    const { p, set } = policy(2);
    const outer = p.forAnalysisThreads(2);
    const inner = p.forAnalysisThreads(2);
    inner();
    expect(set).toEqual(['--no-concurrent-osr']);
    outer();
    expect(set).toEqual(['--no-concurrent-osr', '--concurrent-osr']);
  });

  it('leaves the flag to a program started with it either way', () => {
    for (const arg of ['--no-concurrent-osr', '--concurrent-osr', '--no_concurrent_osr']) {
      const set: string[] = [];
      new LoopCompilation((f) => set.push(f), () => 2, () => true, () => ['--max-old-space-size=4096', arg]).forAnalysisThreads(2)();
      expect(set).toEqual([]);
    }
  });

  it('sets nothing with a core free, on a worker thread, or after disable()', () => {
    const free = policy(4);
    free.p.forAnalysisThreads(2)();
    const worker = policy(2, false);
    worker.p.forAnalysisThreads(2)();
    const off = policy(2);
    off.p.disable();
    off.p.forAnalysisThreads(2)();
    expect([free.set, worker.set, off.set]).toEqual([[], [], []]);
  });

  it('in an enabled process (the CLI), sets the flag for good: nothing is set back', () => {
    const { p, set } = policy(2);
    p.enable();
    p.forAnalysisThreads(2)();
    p.forAnalysisThreads(2)();
    expect(set).toEqual(['--no-concurrent-osr']);
    expect(p.beforeComputeThreads(8)).toBe(true);
  });

  it('the export pool (not one synchronous analysis) sets nothing in a library program', () => {
    const { p, set } = policy(2);
    expect(p.beforeComputeThreads(2)).toBe(false);
    expect(set).toEqual([]);
  });
});

describe('who consults the policy', () => {
  afterEach(() => vi.restoreAllMocks());

  it('the NVTX worker, as it starts beside this thread (two threads compute), and what it set is set back when the analysis returns', () => {
    const spy = vi.spyOn(loopCompilation, 'forAnalysisThreads');
    const flagsBefore = process.env.ITERSCOPE_V8_FLAGS;
    let flagsDuring: string | undefined;
    const a = withExport(fixture('pytorch-dense', 'trace.sqlite'), (h) =>
      analyzeExport(h, { parts: ['iterations', 'gaps'], nvtxRead: 'background' }, () => {
        flagsDuring ??= process.env.ITERSCOPE_V8_FLAGS;
      }),
    );
    expect(a.iterations?.iterations.length).toBeGreaterThan(0);
    expect(spy.mock.calls).toEqual([[2]]);
    // On two cores the flag is on record while the worker computes (after the young generation's,
    // set as the analysis starts: youngGeneration.ts); on more, never. Either way the process's
    // record is as it was once the analysis is over.
    if (availableParallelism() <= 2 && flagsBefore === undefined) expect(flagsDuring).toBe('--semi-space-growth-factor=1 --no-parallel-scavenge --no-concurrent-osr');
    expect(process.env.ITERSCOPE_V8_FLAGS).toBe(flagsBefore);
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

/**
 * `lines` of an ES module run in a process of its own (it sets real V8 flags), after the built
 * `setRuntimeV8Flags` and `RUNTIME_V8_FLAGS_ENV` are imported, with no ITERSCOPE_V8_FLAGS inherited.
 */
function withDefaultSetter(lines: string[]) {
  const built = join(REPO_ROOT, 'dist', 'src', 'v8', 'loopCompilation.js');
  const script = [`import { setRuntimeV8Flags, RUNTIME_V8_FLAGS_ENV } from ${JSON.stringify(built)};`, ...lines].join('\n');
  const env = { ...process.env };
  delete env.ITERSCOPE_V8_FLAGS;
  return spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env });
}

describe('the flag, as this Node takes it', () => {
  it('is one of its V8 options', () => {
    const r = spawnSync(process.execPath, ['--v8-options'], { encoding: 'utf8' });
    expect(r.stdout).toMatch(/^\s+--concurrent-osr\b/m);
  });

  it('the default setter records the flags in ITERSCOPE_V8_FLAGS, which a worker started after inherits', () => {
    const r = withDefaultSetter([
      "import { Worker } from 'node:worker_threads';",
      "setRuntimeV8Flags('--no-concurrent-osr');",
      "new Worker(`process.stdout.write(process.env[${JSON.stringify(RUNTIME_V8_FLAGS_ENV)}] ?? 'unset')`, { eval: true });",
    ]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('--no-concurrent-osr');
  });

  it('set back by the default setter, it leaves the record (the default code cache again)', () => {
    const r = withDefaultSetter([
      "setRuntimeV8Flags('--no-concurrent-osr');",
      'const during = process.env[RUNTIME_V8_FLAGS_ENV];',
      "setRuntimeV8Flags('--concurrent-osr');",
      'process.stdout.write(JSON.stringify([during, process.env[RUNTIME_V8_FLAGS_ENV] ?? null]));',
    ]);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual(['--no-concurrent-osr', null]);
  });

  it('set at run time, it prints nothing and the process goes on', () => {
    const r = spawnSync(process.execPath, ['-e', "require('node:v8').setFlagsFromString('--no-concurrent-osr'); let s = 0; for (let i = 0; i < 1e7; i++) s += i; console.log(s)"], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe(String((1e7 * (1e7 - 1)) / 2));
  });
});
