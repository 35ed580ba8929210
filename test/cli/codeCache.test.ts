/**
 * The bundles start with V8's code cache (scripts/launch.mjs, written by scripts/codeCache.mjs at
 * build time): the CLI's; a worker's made under the V8 flags it starts with (those the CLI set,
 * src/v8/loopCompilation.ts, or V8's defaults: a read worker, the library's NVTX worker); the
 * pool worker's; and a cache V8 cannot use changes nothing but the time. `ITERSCOPE_CODE_CACHE_REPORT=1` makes the launcher say, per bundle, what it did.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyOfDist, runEntry } from '../helpers/cli.js';
import { fixture, REPO_ROOT } from '../helpers/fixtures.js';

const DIST = join(REPO_ROOT, 'dist');
const REPORT = { ITERSCOPE_CODE_CACHE_REPORT: '1' };

/** The launcher's lines: bundle -> used / rejected / none, in the order the bundles started. */
function cacheLines(stderr: string): string[] {
  return stderr
    .split('\n')
    .filter((l) => l.startsWith('iterscope: code cache '))
    .map((l) => l.replace('iterscope: code cache ', ''));
}

const bin = join(DIST, 'iterscope.mjs');
/** The NVTX worker (and a read worker) start only with a second core (src/pipeline/analyzeExport.ts). */
const nvtxWorker = availableParallelism() >= 2 ? ['iterscope-nvtx.cjs: used'] : [];
const denseLong = fixture('pytorch-dense-long', 'trace.sqlite');
const tp2 = [fixture('pytorch-tp2', 'trace.rank0.sqlite'), fixture('pytorch-tp2', 'trace.rank1.sqlite')];

describe('the built code caches are used', () => {
  it('--version: the CLI bundle compiles from its cache; without the variable nothing is said', () => {
    const r = runEntry(bin, ['--version'], REPORT);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('0.1.0\n');
    expect(cacheLines(r.stderr)).toEqual(['iterscope.cjs: used']);
    expect(runEntry(bin, ['--version']).stderr).toBe('');
  });

  it('report on pytorch-dense-long (NVTX worker): the worker bundle too, under the flags the CLI gives it', () => {
    // 200k+ NVTX rows: the report reads them in the NVTX worker (a second core is needed).
    const full = runEntry(bin, ['report', denseLong, '--format', 'md'], REPORT);
    expect(full.status).toBe(0);
    expect(full.stdout).toMatch(/^# iterscope report: trace\.sqlite\n/);
    expect(cacheLines(full.stderr)).toEqual(['iterscope.cjs: used', ...nvtxWorker]);
  });

  it('nvtx --gpu (a read worker, started under V8 defaults): the worker bundle from its other cache', () => {
    const r = runEntry(bin, ['nvtx', denseLong, '--gpu', '--format', 'csv'], REPORT);
    expect(r.status).toBe(0);
    expect(cacheLines(r.stderr)).toEqual(['iterscope.cjs: used', ...nvtxWorker]);
  });

  it('ITERSCOPE_V8_FLAGS inherited from another process says nothing of this one: the same caches are used', () => {
    const r = runEntry(bin, ['nvtx', denseLong, '--gpu', '--format', 'csv'], { ...REPORT, ITERSCOPE_V8_FLAGS: '--no-concurrent-osr' });
    expect(r.status).toBe(0);
    expect(cacheLines(r.stderr)).toEqual(['iterscope.cjs: used', ...nvtxWorker]);
  });

  it('the library: its bundle, and its NVTX worker from the cache made under the flags the analysis set (none left set after it)', () => {
    const lib = join(DIST, 'iterscope-lib.mjs');
    const script = [
      `import { withExport, analyzeExport, REPORT_PARTS } from ${JSON.stringify(lib)};`,
      `const a = withExport(${JSON.stringify(denseLong)}, (h) => analyzeExport(h, { parts: REPORT_PARTS }));`,
      "process.stdout.write(`${a.nvtx.rows.length} ${process.env.ITERSCOPE_V8_FLAGS ?? 'none'}`);",
    ].join('\n');
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, ...REPORT } });
    expect(r.status, r.stderr).toBe(0);
    const [rows, flagsAfter] = r.stdout.split(' ');
    expect(Number(rows)).toBeGreaterThan(0);
    expect(flagsAfter).toBe('none');
    // The worker set the young-generation flag again under the analysis's lease: else its cache would be rejected.
    expect(cacheLines(r.stderr)).toEqual(['iterscope-lib.cjs: used', ...nvtxWorker]);
  });

  it('iterations over two exports in two pool workers: each worker bundle from its cache', () => {
    const r = runEntry(bin, ['iterations', ...tp2, '--format', 'csv'], { ...REPORT, ITERSCOPE_JOBS: '2' });
    expect(r.status).toBe(0);
    expect(cacheLines(r.stderr)).toEqual(['iterscope.cjs: used', 'iterscope-worker.cjs: used', 'iterscope-worker.cjs: used']);
  });
});

describe('a cache V8 cannot use changes nothing but the time', () => {
  let dir = '';
  let copy = '';
  beforeAll(() => {
    dir = copyOfDist('iterscope-codecache-', readdirSync(DIST).filter((f) => /^iterscope.*\.(mjs|cjs|v8cache)$/.test(f)));
    copy = join(dir, 'dist', 'iterscope.mjs');
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const args = ['iterations', fixture('pytorch-dense', 'trace.sqlite'), '--log', fixture('pytorch-dense', 'executor.log'), '--format', 'csv'];

  it('damaged: rejected, the same output as with the built cache', () => {
    const expected = runEntry(bin, args);
    expect(expected.status).toBe(0);
    writeFileSync(join(dir, 'dist', 'iterscope.cjs.v8cache'), Buffer.alloc(4096, 7));
    const r = runEntry(copy, args, REPORT);
    expect(cacheLines(r.stderr)).toEqual(['iterscope.cjs: rejected']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(expected.stdout);
    expect(r.stderr.replace(/^iterscope: code cache .*\n/gm, '')).toBe(expected.stderr);
  });

  it('missing: compiled from the source, the same output', () => {
    const expected = runEntry(bin, args);
    rmSync(join(dir, 'dist', 'iterscope.cjs.v8cache'), { force: true });
    const r = runEntry(copy, args, REPORT);
    expect(cacheLines(r.stderr)).toEqual(['iterscope.cjs: none']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(expected.stdout);
  });

  it('without its bundle (a broken build): one line, exit 70 (internal error)', () => {
    const partial = mkdtempSync(join(tmpdir(), 'iterscope-nobundle-'));
    try {
      for (const f of ['iterscope.mjs', 'iterscope-launch.mjs']) copyFileSync(join(DIST, f), join(partial, f));
      const r = runEntry(join(partial, 'iterscope.mjs'), ['--version']);
      expect(r.status).toBe(70);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^iterscope: internal error: cannot start .*iterscope\.cjs: ENOENT.*\(rebuild: npm run build\)\n$/);
    } finally {
      rmSync(partial, { recursive: true, force: true });
    }
  });

  it('the HTML report still loads its chart packages (import() through the launcher) under a cache', () => {
    const r = runEntry(bin, ['report', fixture('pytorch-dense', 'trace.sqlite'), '--format', 'html'], REPORT);
    expect(cacheLines(r.stderr)).toEqual(['iterscope.cjs: used']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^<!doctype html>/i);
    expect(r.stdout).toContain('<svg');
  });
});
