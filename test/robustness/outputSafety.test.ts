/**
 * Issue 14, item 1 (data loss): iterscope never deletes or overwrites a file it did not create, and
 * compares outputs with inputs by identity (device + inode), not by the name given. Everything runs
 * on copies in a tmp directory (a device node is made there with mknod when we may, never /dev/full).
 */
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TraceFileWriter } from '../../src/trace/writer.js';
import { writeOutputFile } from '../../src/outputFile.js';
import { runCli } from '../helpers/cli.js';
import { CLI_BUNDLE as CLI, fixture } from '../helpers/fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'iterscope-dataloss-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');
const p = (...parts: string[]) => join(dir, ...parts);

const exp = p('trace.sqlite');
copyFileSync(fixture('vllm-dense', 'trace.sqlite'), exp);
const rules = p('rules.json');
writeFileSync(rules, JSON.stringify([{ category: 'gemm', pattern: 'gemm|nvjet' }]));
const log = p('vllm.log');
copyFileSync(fixture('vllm-dense', 'vllm.log'), log);

/** A copy of /dev/full in the tmp directory, when this process may create device nodes. */
function makeFullDevice(): string | null {
  const dev = p('full-device');
  const r = spawnSync('mknod', [dev, 'c', '1', '7']);
  return r.status === 0 && existsSync(dev) && statSync(dev).isCharacterDevice() ? dev : null;
}

function expectGuardRefusal(args: string[], env: Record<string, string> = {}) {
  const before = readdirSync(dir).sort();
  const hashes = before.filter((f) => statSync(p(f)).isFile()).map((f) => sha(p(f)));
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, GITHUB_STEP_SUMMARY: '', ...env } });
  expect(r.status).toBe(2);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(r.stderr).toContain('never writes to an input file');
  expect(readdirSync(dir).sort()).toEqual(before);
  expect(before.filter((f) => statSync(p(f)).isFile()).map((f) => sha(p(f)))).toEqual(hashes);
}

describe('1. data loss: trace -o X never deletes X when the write fails', () => {
  it('a failed trace write to a device leaves the device node in place (exit 2, one line)', () => {
    const dev = makeFullDevice();
    if (!dev) return; // not allowed to mknod here: the unit test below covers the writer
    const r = runCli(['trace', exp, '-o', dev]);
    expect(r.status).toBe(2);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stderr).toMatch(/ENOSPC/);
    expect(statSync(dev).isCharacterDevice()).toBe(true);
    rmSync(dev);
  });

  it('an output in a directory that does not exist: one line naming the output as given (exit 2)', () => {
    const target = p('no-such-dir', 'trace.json');
    const r = runCli(['trace', exp, '-o', target]);
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n').pop()).toBe(`iterscope: ${target}: cannot write: no directory ${p('no-such-dir')}`);
    expect(r.stderr).not.toContain('.tmp');
    expect(existsSync(p('no-such-dir'))).toBe(false);
  });

  it('an aborted trace leaves an existing regular file byte-identical and no temporary file behind', () => {
    const target = p('keep.json');
    writeFileSync(target, '{"precious":true}\n');
    const before = readdirSync(dir).sort();
    const w = new TraceFileWriter(target);
    for (let i = 0; i < 50_000; i++) w.event(`{"name":"e${i}","ph":"i","ts":${i},"pid":1,"tid":1}`);
    w.abort();
    expect(readFileSync(target, 'utf8')).toBe('{"precious":true}\n');
    expect(readdirSync(dir).sort()).toEqual(before);
  });

  it('a completed trace replaces the target through a symlink, keeping the link', () => {
    const real = p('real.json');
    writeFileSync(real, 'old');
    const link = p('link.json');
    symlinkSync(real, link);
    const w = new TraceFileWriter(link);
    w.event('{"name":"x","ph":"i","ts":0,"pid":1,"tid":1}');
    w.close({ n: 1 });
    expect(JSON.parse(readFileSync(real, 'utf8')).traceEvents).toHaveLength(1);
    expect(readFileSync(link, 'utf8')).toBe(readFileSync(real, 'utf8'));
    rmSync(link);
    rmSync(real);
  });

  it('writeOutputFile to a directory is a one-line usage error, nothing created', () => {
    const before = readdirSync(dir).sort();
    expect(() => writeOutputFile(dir, 'x')).toThrow(/is a directory/);
    expect(readdirSync(dir).sort()).toEqual(before);
  });
});

describe('1. data loss: the -o guard compares by device and inode', () => {
  it('a hard link to the export', () => {
    const hard = p('hard.sqlite');
    linkSync(exp, hard);
    expectGuardRefusal(['kernels', exp, '-o', hard]);
    rmSync(hard);
  });

  it('a member of a directory input (ranks, iterations, gaps)', () => {
    const ranksDir = p('ranks');
    mkdirSync(ranksDir);
    copyFileSync(exp, join(ranksDir, 'trace.rank0.sqlite'));
    copyFileSync(exp, join(ranksDir, 'trace.rank1.sqlite'));
    for (const cmd of ['ranks', 'iterations', 'gaps']) expectGuardRefusal([cmd, ranksDir, '-o', join(ranksDir, 'trace.rank1.sqlite')]);
    expectGuardRefusal(['kernels', join(ranksDir, 'trace.rank*.sqlite'), '-o', join(ranksDir, 'trace.rank0.sqlite')]);
    rmSync(ranksDir, { recursive: true });
  });

  it('the --categories rules file', () => expectGuardRefusal(['categories', '--categories', rules, '-o', rules]));

  it('a log given with --log', () => expectGuardRefusal(['iterations', exp, '--iteration-range', 'x', '--log', log, '-o', log]));

  it('GITHUB_STEP_SUMMARY naming the export or a log', () => {
    expectGuardRefusal(['kernels', exp, '--format', 'md'], { GITHUB_STEP_SUMMARY: exp });
    expectGuardRefusal(['report', exp, '--log', log], { GITHUB_STEP_SUMMARY: log });
  });

  it('a new -o file beside the inputs is still written', () => {
    const out = p('kernels.csv');
    const r = runCli(['kernels', exp, '-o', out]);
    expect(r.status).toBe(0);
    expect(readFileSync(out, 'utf8').split('\n')[0]).toMatch(/^Time \(%\)/);
    expect(readdirSync(dir).filter((f) => f.includes('.tmp'))).toEqual([]);
    rmSync(out);
  });
});

describe('1. data loss: stdout write errors end with one line and exit 2', () => {
  it('kernels E > a full device: ENOSPC, exit 2, no stack', () => {
    const dev = makeFullDevice();
    if (!dev) return;
    const r = spawnSync('sh', ['-c', `"${process.execPath}" "${CLI}" kernels "${exp}" > "${dev}"`], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^iterscope: cannot write to stdout: ENOSPC/);
    rmSync(dev);
  });
});
