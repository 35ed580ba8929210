import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync, openSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { fixture, REPO_ROOT } from '../helpers/fixtures.js';

const sample = join(REPO_ROOT, 'sample-data', 'moe-loops-100-119.sqlite');
const realLog = readFileSync(join(REPO_ROOT, 'sample-data', 'moe-iteration_log.txt'), 'utf8').split('\n').filter(Boolean);
const dir = mkdtempSync(join(tmpdir(), 'iterscope-hostile-'));
const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');

function writeLog(name: string, text: string | Buffer): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

function iterations(log: string) {
  const before = sha(log);
  const r = runCli(['iterations', sample, '--log', log, '--format', 'json', '--no-idle-causes']);
  expect(sha(log)).toBe(before);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  return { ...r, json: r.status === 0 ? JSON.parse(r.stdout) : null };
}

describe('iteration logs that fight back: the analysis goes on and says what it skipped', () => {
  it('garbage lines, truncated JSON and binary bytes are skipped and counted', () => {
    const lines = [...realLog.slice(100, 120)];
    lines.splice(3, 0, 'garbage ]]] {{{', "{'iter': 999, 'inflightBatchingStats': {'numContext");
    const p = writeLog('noisy.txt', Buffer.concat([Buffer.from(lines.join('\n') + '\n'), Buffer.from([0xff, 0xfe, 0x00, 0x9c, 0x0a])]));
    const r = iterations(p);
    expect(r.status).toBe(0);
    expect(r.json.coverage.joined).toBe(20);
    expect(r.json.coverage.logSkippedLines).toBe(3);
    expect(r.stderr).toContain('3 log lines were not iteration records (skipped)');
  });

  it('a 100 MB line does not stop the analysis', () => {
    const p = join(dir, 'huge.txt');
    const fd = openSync(p, 'w');
    writeSync(fd, realLog.slice(100, 110).join('\n') + '\n');
    const chunk = Buffer.alloc(1 << 20, 'x');
    for (let i = 0; i < 100; i++) writeSync(fd, chunk);
    writeSync(fd, '\n' + realLog.slice(110, 120).join('\n') + '\n');
    closeSync(fd);
    const r = iterations(p);
    expect(r.status).toBe(0);
    expect(r.json.coverage.joined).toBe(20);
    expect(r.json.coverage.logSkippedLines).toBe(1);
  });

  it('duplicate and out-of-order iterations: the last record of an iteration wins, order does not matter', () => {
    const shuffled = [...realLog.slice(100, 120)].reverse();
    shuffled.push(realLog[105]);
    const r = iterations(writeLog('shuffled.txt', shuffled.join('\n') + '\n'));
    expect(r.status).toBe(0);
    expect(r.json.coverage.joined).toBe(20);
    expect(r.json.iterations.every((x: { labelMatchesLog: boolean }) => x.labelMatchesLog === true)).toBe(true);
  });

  it('a log from a different run (no overlap with the capture) is reported as such', () => {
    const r = iterations(fixture('cpp-legacy-windows', 'executor.log'));
    expect(r.status).toBe(0);
    expect(r.json.coverage.joined).toBe(0);
    expect(r.stderr).toMatch(/no overlap with the capture/);
  });

  it('an empty log joins nothing and is not an error', () => {
    const r = iterations(writeLog('empty.txt', ''));
    expect(r.status).toBe(0);
    expect(r.json.coverage.joined).toBe(0);
  });
});

describe('SQL metacharacters in string options are data, never SQL', () => {
  const evil = `x'; DROP TABLE StringIds; SELECT '" OR 1=1 --`;
  it('every string option either refuses the value or treats it as a literal; the export is unchanged', () => {
    const before = sha(sample);
    const cases: { args: string[]; status: number }[] = [
      { args: ['iterations', sample, '--iteration-range', evil], status: 2 },
      { args: ['iterations', sample, '--iteration-range', `/${evil}/`], status: 2 },
      { args: ['iterations', sample, '--profile-range', evil], status: 2 },
      { args: ['iterations', sample, '--first-iter', evil], status: 2 },
      { args: ['kernels', sample, '--by', evil], status: 2 },
      { args: ['kernels', sample, '--format', evil], status: 2 },
      { args: ['gaps', sample, '--min-gap', evil], status: 2 },
      { args: ['gaps', sample, '--iteration-range', evil], status: 0 },
      { args: ['metrics', sample, '--metric', evil], status: 0 },
      { args: ['compare', sample, sample, '--threshold', evil], status: 2 },
    ];
    for (const c of cases) {
      const r = runCli(c.args);
      expect(r.status, c.args.join(' ')).toBe(c.status);
      expect(r.stderr).not.toMatch(/SQLITE|syntax error|\n\s+at /);
    }
    expect(sha(sample)).toBe(before);
  });
});
