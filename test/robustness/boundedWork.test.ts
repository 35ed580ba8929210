/**
 * Issue 14, item 3 (hangs): user regexes and option files read whole are bounded. Everything
 * runs on files in a tmp directory; a hang would show as the vitest timeout, not as a timing.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileCategoryRules, DEFAULT_CATEGORY_RULES } from '../../src/categories/rules.js';
import { UsageError } from '../../src/errors.js';
import { parseIterationRangeSpec } from '../../src/iterations/rangeSpec.js';
import { compileUserRegex, nestedRepeat, USER_REGEX_MAX_TEXT } from '../../src/userRegex.js';
import { runCli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'iterscope-bounded-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function oneLineUsageError(args: string[], problem: RegExp) {
  const r = runCli(args);
  expect(r.status).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(r.stderr).toMatch(problem);
  return r;
}

describe('3. hangs: user regexes are bounded (nested repeats rejected, names cut at 4096 characters)', () => {
  it('finds nested repeats and identical repeated alternatives, and leaves ordinary patterns alone', () => {
    for (const bad of ['(a+)+$', '(a*)*', '(?:x+y?)*', '(a|a)*', '(\\w+::)+', '(?<n>a+){2,}', '((ab)*c)+']) expect(nestedRepeat(bad), bad).not.toBeNull();
    for (const ok of ['(a|b)+', '\\(a+\\)+', '[(a+)]+', 'a+b*c+', '(ab)+', '(a+){1}', '^\\[Executor\\] _forward_step (\\d+)', 'nccl|AllReduce']) expect(nestedRepeat(ok), ok).toBeNull();
    // The default table passes its own check.
    expect(() => compileCategoryRules(DEFAULT_CATEGORY_RULES)).not.toThrow();
  });

  it('a --categories rule (a+)+$ is a one-line usage error', () => {
    const rules = join(dir, 'redos.json');
    writeFileSync(rules, JSON.stringify([{ category: 'x', pattern: '(a+)+$' }]));
    oneLineUsageError(['categories', '--categories', rules], /rule 1 \(x\): '\(a\+\)\+' at character 0: .*exponential time/);
  });

  it("--iteration-range '/(a+)+$/' is a one-line usage error before the export is read", () => {
    expect(() => parseIterationRangeSpec('/(a+)+$/')).toThrow(UsageError);
    oneLineUsageError(['iterations', fixture('vllm-dense', 'trace.sqlite'), '--iteration-range', '/(a+)+$/'], /--iteration-range: .*nested|--iteration-range: .*repeat/);
  });

  it('a name is matched on its first 4096 characters', () => {
    const re = compileUserRegex('b$', '', 'test');
    expect(re.test(`${'a'.repeat(USER_REGEX_MAX_TEXT - 1)}b`)).toBe(true);
    expect(re.test(`${'a'.repeat(USER_REGEX_MAX_TEXT)}b`)).toBe(false);
    expect(parseIterationRangeSpec('/step (\\d+)$/').kind).toBe('regex');
  });

  it('a 2 MB regex is refused without echoing it (the file by its size, a 900 kB pattern by its length)', () => {
    const huge = join(dir, 'huge-pattern.json');
    writeFileSync(huge, JSON.stringify([{ category: 'x', pattern: 'a'.repeat(2_000_000) }]));
    const r1 = oneLineUsageError(['categories', '--categories', huge], /huge-pattern\.json: categories file is \d{7} bytes; at most 1048576 are read$/m);
    expect(r1.stderr.length).toBeLessThan(300);
    const big = join(dir, 'big-pattern.json');
    writeFileSync(big, JSON.stringify([{ category: 'x', pattern: 'a'.repeat(900_000) }]));
    const r2 = oneLineUsageError(['categories', '--categories', big], /pattern of 900000 characters; at most 10000/);
    expect(r2.stderr.length).toBeLessThan(300);
    const r3 = oneLineUsageError(['iterations', fixture('vllm-dense', 'trace.sqlite'), '--iteration-range', `/${'(x'.repeat(30_000)}/`], /--iteration-range: pattern of 60000 characters/);
    expect(r3.stderr.length).toBeLessThan(300);
  });
});

describe('3. hangs: option files read whole are stat-checked regular files with a size cap', () => {
  it('--categories /dev/zero fails at once', () => oneLineUsageError(['categories', '--categories', '/dev/zero'], /\/dev\/zero: categories file is not a regular file/));

  it('--categories FIFO fails at once (nobody writes to it)', () => {
    const fifo = join(dir, 'rules.fifo');
    if (spawnSync('mkfifo', [fifo]).status !== 0) return;
    oneLineUsageError(['categories', '--categories', fifo], /rules\.fifo: categories file is not a regular file/);
  });

  it('a rules file above 1 MB is refused', () => {
    const rules = join(dir, 'big.json');
    writeFileSync(rules, `[${' '.repeat(1024 * 1024)}]`);
    oneLineUsageError(['categories', '--categories', rules], /big\.json: categories file is 1048578 bytes; at most 1048576/);
  });

  it('a missing or special summary baseline is refused', () => {
    oneLineUsageError(['compare', join(dir, 'x.json'), join(dir, 'y.json')], /x\.json: cannot read summary file: ENOENT/);
    const fifo = join(dir, 'baseline.json');
    if (spawnSync('mkfifo', [fifo]).status !== 0) return;
    oneLineUsageError(['compare', fifo, join(dir, 'y.json')], /baseline\.json: summary file is not a regular file/);
  });

  it('--log <(...) (a pipe) still works', () => {
    const r = spawnSync('bash', ['-c', `node "$CLI" iterations "$E" --log <(cat "$LOG") --format csv | head -3`], {
      encoding: 'utf8',
      env: { ...process.env, CLI: join(process.cwd(), 'dist/src/cli/main.js'), E: fixture('pytorch-tp2', 'trace.rank0.sqlite'), LOG: fixture('pytorch-tp2', 'iteration_log.rank0.txt'), GITHUB_STEP_SUMMARY: '' },
    });
    expect(r.stderr).not.toMatch(/not a regular file/);
    expect(r.stdout.split('\n')[0]).toMatch(/^Iter,/);
  });
});
