/**
 * Issue 58: a command given an input of 256 MiB or more runs, on Linux with glibc, in a child
 * process whose environment fixes glibc's mmap threshold (scripts/launch.mjs,
 * `relaunchForLargeInputs`): memory the analysis lets go is given back instead of held by the
 * allocator. Which runs start a child (`largeRunEnv`), and that a relaunched run says and exits
 * exactly what the same run in one process does. Large inputs here are sparse files: no disk.
 */
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module without types (copied to dist/iterscope-launch.mjs by the build)
import * as launch from '../../scripts/launch.mjs';
import { runEntry } from '../helpers/cli.js';
import { fixture, REPO_ROOT } from '../helpers/fixtures.js';

type Env = Record<string, string>;
const { LARGE_INPUT_BYTES, LARGE_RUN_ALLOCATOR_ENV, NO_RELAUNCH_ENV } = launch as { LARGE_INPUT_BYTES: number; LARGE_RUN_ALLOCATOR_ENV: Env; NO_RELAUNCH_ENV: string };
const largeRunEnv = launch.largeRunEnv as (argv: string[], env: Env, host?: { platform: string; glibc: () => boolean }) => Env | null;

const dir = mkdtempSync(join(tmpdir(), 'iterscope-relaunch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A sparse file of `bytes` (its first bytes `head`): as large as an export, on no disk. */
function sparseFile(name: string, bytes: number, head = 'not an export\n'): string {
  const path = join(dir, name);
  writeFileSync(path, head);
  truncateSync(path, bytes);
  return path;
}

const large = sparseFile('large.sqlite', LARGE_INPUT_BYTES);
const small = sparseFile('small.sqlite', LARGE_INPUT_BYTES - 1);
const linuxGlibc = { platform: 'linux', glibc: () => true };
const argv = (...args: string[]) => ['node', 'iterscope.mjs', ...args];

describe('largeRunEnv: which runs start a child', () => {
  it('a file of 256 MiB or more among the arguments, on Linux with glibc: the environment plus the fixed threshold', () => {
    expect(LARGE_RUN_ALLOCATOR_ENV).toEqual({ MALLOC_MMAP_THRESHOLD_: '131072' });
    expect(largeRunEnv(argv('report', large, '--format', 'md'), { HOME: '/h' }, linuxGlibc)).toEqual({ HOME: '/h', MALLOC_MMAP_THRESHOLD_: '131072' });
    // A log as large counts too, wherever it stands, also as an option's `=` value.
    expect(largeRunEnv(argv('iterations', small, '--log', large), {}, linuxGlibc)).not.toBeNull();
    expect(largeRunEnv(argv('iterations', small, `--log=${large}`), {}, linuxGlibc)).not.toBeNull();
  });

  it('none for smaller files, options, missing paths and directories', () => {
    for (const args of [argv('report', small), argv('report', `--log=${small}`), argv('report', '--format', 'md'), argv('report', join(dir, 'missing.sqlite')), argv('report', dir), argv('--version')]) {
      expect(largeRunEnv(args, {}, linuxGlibc), args.join(' ')).toBeNull();
    }
  });

  it('none off Linux, off glibc, with the threshold already set (either way), or when told not to', () => {
    const args = argv('report', large);
    expect(largeRunEnv(args, {}, { platform: 'darwin', glibc: () => true })).toBeNull();
    expect(largeRunEnv(args, {}, { platform: 'linux', glibc: () => false })).toBeNull();
    expect(largeRunEnv(args, { MALLOC_MMAP_THRESHOLD_: '65536' }, linuxGlibc)).toBeNull();
    expect(largeRunEnv(args, { GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=65536' }, linuxGlibc)).toBeNull();
    expect(largeRunEnv(args, { [NO_RELAUNCH_ENV]: '1' }, linuxGlibc)).toBeNull();
    // The child's own environment: it starts no other.
    expect(largeRunEnv(args, largeRunEnv(args, {}, linuxGlibc)!, linuxGlibc)).toBeNull();
  });
});

describe('a relaunched run says and exits what one process does', () => {
  const bin = join(REPO_ROOT, 'dist', 'iterscope.mjs');

  it('a large file that is not an export: the same one line and exit code 2', () => {
    const child = runEntry(bin, ['info', large]);
    const here = runEntry(bin, ['info', large], { [NO_RELAUNCH_ENV]: '1' });
    expect(here.status).toBe(2);
    expect(here.stderr).toContain(large);
    expect(child).toEqual(here);
  });

  it('a real export, with a large file among the arguments (the output, written over): the same output and exit code', () => {
    const run = (env: Env) => {
      const out = sparseFile('out.csv', LARGE_INPUT_BYTES);
      const r = runEntry(bin, ['kernels', fixture('pytorch-dense', 'trace.sqlite'), '--format', 'csv', '-o', out], env);
      return { ...r, written: readFileSync(out, 'utf8') };
    };
    const child = run({});
    expect(child.status).toBe(0);
    expect(child.written).toMatch(/^Time \(%\),Total Time \(ns\),Instances/);
    expect(child).toEqual(run({ [NO_RELAUNCH_ENV]: '1' }));
  });
});
