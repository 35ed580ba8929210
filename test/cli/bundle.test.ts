/**
 * The single-file CLI bundle (`dist/iterscope.mjs`, package.json `bin`, built by
 * scripts/bundle.mjs from the tsc output) behaves exactly like the tsc entry
 * (`dist/src/cli/main.js`): same stdout, stderr and exit code on real fixtures, including the
 * commands that start a worker thread (several exports) or a child process (Kineto traces), whose
 * entries the bundle resolves beside itself (dist/iterscope-worker.mjs, dist/iterscope-kineto.mjs).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyOfDist, runEntry, type CliResult } from '../helpers/cli.js';
import { CLI, fixture, REPO_ROOT } from '../helpers/fixtures.js';

const DIST = join(REPO_ROOT, 'dist');
const BUNDLE = join(DIST, 'iterscope.mjs');
/**
 * The CLI, the pool's worker and the Kineto converter as built: the CLI and the worker are
 * CommonJS bundles (`.cjs`) started by their `.mjs` through the launcher, with V8's code cache.
 */
const BUNDLE_FILES = [
  'iterscope.mjs',
  'iterscope.cjs',
  'iterscope.cjs.v8cache',
  'iterscope-launch.mjs',
  'iterscope-worker.mjs',
  'iterscope-worker.cjs',
  'iterscope-worker.cjs.v8cache',
  'iterscope-kineto.mjs',
];
/** The tsc outputs the bundle is made from. */
const SOURCES = [CLI, join(DIST, 'src', 'ranks', 'worker.js'), join(DIST, 'src', 'kineto', 'convert', 'convertMain.js')];

/** Runs `args` through the bundle and the tsc entry; expects the same result, and returns it. */
function both(args: string[], env: Record<string, string> = {}, bundle = BUNDLE): CliResult {
  const b = runEntry(bundle, args, env);
  const t = runEntry(CLI, args, env);
  expect(b.status, `bundle stderr: ${b.stderr}`).toBe(t.status);
  expect(b.stdout).toBe(t.stdout);
  expect(b.stderr).toBe(t.stderr);
  return b;
}

const dense = fixture('pytorch-dense', 'trace.sqlite');
const denseLog = fixture('pytorch-dense', 'executor.log');
const tp2 = [fixture('pytorch-tp2', 'trace.rank0.sqlite'), fixture('pytorch-tp2', 'trace.rank1.sqlite')];
const tp2Logs = ['--log', fixture('pytorch-tp2', 'executor.rank0.log'), '--log', fixture('pytorch-tp2', 'executor.rank1.log')];
const kineto = fixture('pytorch-torch-only', 'trace.json');
/** Two exports: worker threads (two, whatever the core count), not the in-process path. */
const TWO_WORKERS = { ITERSCOPE_JOBS: '2' };

beforeAll(() => {
  // `npm test` bundles after tsc; a bare `vitest run` after tsc alone would test a stale bundle.
  const newest = Math.max(...SOURCES.map((f) => statSync(f).mtimeMs));
  const stale = BUNDLE_FILES.some((f) => !existsSync(join(DIST, f)) || statSync(join(DIST, f)).mtimeMs < newest);
  if (stale) {
    const r = spawnSync(process.execPath, [join(REPO_ROOT, 'scripts', 'bundle.mjs')], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`scripts/bundle.mjs failed: ${r.stderr}`);
  }
});

describe('dist/iterscope.mjs (the CLI bundle) = dist/src/cli/main.js', () => {
  it('is what package.json bin runs: the launcher of one bundle, which needs only its external packages', () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
    expect(pkg.bin.iterscope).toBe('dist/iterscope.mjs');
    const text = readFileSync(BUNDLE, 'utf8');
    expect(text.startsWith('#!/usr/bin/env node\n')).toBe(true);
    const importsOf = (t: string) => [...t.matchAll(/^import\s.*?from\s+["']([^"']+)["']/gm)].map((m) => m[1]);
    expect(importsOf(text)).toEqual(['./iterscope-launch.mjs']);
    expect(text).toContain("runBundle(new URL('./iterscope.cjs', import.meta.url))");
    expect(importsOf(readFileSync(join(DIST, 'iterscope-launch.mjs'), 'utf8')).every((s) => s.startsWith('node:'))).toBe(true);
    // Relative requires would reach into dist/src: none may be left.
    const cjs = readFileSync(join(DIST, 'iterscope.cjs'), 'utf8');
    const required = [...cjs.matchAll(/\brequire\(["']([^"']+)["']\)/g)].map((m) => m[1]);
    expect(required.filter((s) => s.startsWith('.'))).toEqual([]);
    expect(new Set(required.filter((s) => !s.startsWith('node:') && !builtinModules.includes(s)))).toEqual(new Set(['better-sqlite3']));
    // Compiled inside a function by the launcher: no hashbang line, and strict like the modules it is made of.
    expect(cjs.startsWith("'use strict';")).toBe(true);
  });

  it('the bundles the launcher compiles are ASCII (held by V8 as one-byte strings), their other characters escaped', () => {
    for (const name of ['iterscope.cjs', 'iterscope-nvtx.cjs', 'iterscope-worker.cjs', 'iterscope-lib.cjs']) {
      const text = readFileSync(join(DIST, name), 'utf8');
      expect(/[^\x00-\x7f]/.test(text), name).toBe(false);
    }
    // The parser's µs unit, from a regular expression literal the escape stands for.
    expect(readFileSync(join(DIST, 'iterscope.cjs'), 'utf8')).toContain('|\\u00b5s|');
  });

  it('--version', () => {
    const r = both(['--version']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('0.1.0\n');
  });

  it('report on pytorch-dense with its executor log', () => {
    const r = both(['report', dense, '--log', denseLog]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^# iterscope report: trace\.sqlite\n/);
    expect(r.stdout).toContain('119 of 120 iterations have more GPU idle than busy time (host-bound)');
    expect(r.stdout).toContain('recoverable 515.96 ms (30.0% of the wall)');
  });

  it('iterations over the two tp2 ranks (worker threads) with their logs', () => {
    const r = both(['iterations', ...tp2, ...tp2Logs, '--format', 'csv'], TWO_WORKERS);
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^Rank,Iter,Phase,/);
    expect(lines).toHaveLength(81);
    expect(lines.filter((l) => l.startsWith('0,'))).toHaveLength(40);
    expect(lines.filter((l) => l.startsWith('1,'))).toHaveLength(40);
    expect(lines[1]).toMatch(/^0,30,mixed,1,96,15,15,43565984,26143014,2054639,/);
    expect(r.stderr).toContain('iterscope: rank 1: 39 of 40 iterations joined to a log record');
  });

  it('nvtx --gpu --format csv', () => {
    const r = both(['nvtx', dense, '--gpu', '--format', 'csv']);
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^Range,Style,Total Proj Time \(ns\),Total Range Time \(ns\),Range Instances,/);
    expect(lines[1]).toBe(
      '"TensorRT-LLM:[Executor] _forward_step 0: 4 ctx reqs, 1984 ctx tokens, 0 gen reqs",PushPop,301573635,301894844,1,301573635.0,301573635.0,301573635,301573635,0.0,1400,1400.0,0.0,0.0',
    );
  });

  it('kernels on a Kineto trace (converted in a child process)', () => {
    const r = both(['kernels', kineto, '--format', 'csv']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Time \(%\),Total Time \(ns\),Instances/);
    expect(r.stdout).toContain('nvjet_sm90_tst_128x16_64x11_4x1_v_bz_TNT');
  });

  it('bad input: one line on stderr, exit 2', () => {
    const missing = join(tmpdir(), 'iterscope-no-such-export.sqlite');
    const r = both(['kernels', missing, '--format', 'csv']);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(missing);
    const usage = both(['iterations', dense, '--first-iter', 'ten']);
    expect(usage.status).toBe(2);
    expect(usage.stderr).toMatch(/--first-iter/);
  });
});

describe('the bundle needs only its own files (no dist/src beside it)', () => {
  let dir = '';
  let bundle = '';
  beforeAll(() => {
    // The bundle's files alone in a dist/ of their own, with the installed packages (the
    // external better-sqlite3) reachable: a worker or converter resolved into dist/src would fail.
    dir = copyOfDist('iterscope-bundle-', BUNDLE_FILES);
    bundle = join(dir, 'dist', 'iterscope.mjs');
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('iterations over two exports starts the bundled worker', () => {
    const r = both(['iterations', ...tp2, '--format', 'csv'], TWO_WORKERS, bundle);
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(81);
  });

  it('without the bundled worker beside it, the same command fails', () => {
    rmSync(join(dir, 'dist', 'iterscope-worker.mjs'));
    const r = runEntry(bundle, ['iterations', ...tp2, '--format', 'csv'], TWO_WORKERS);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('iterscope-worker.mjs');
  });

  it('a Kineto trace goes through the bundled converter', () => {
    const r = both(['kernels', kineto, '--format', 'csv'], {}, bundle);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('nvjet_sm90_tst_128x16_64x11_4x1_v_bz_TNT');
  });
});
