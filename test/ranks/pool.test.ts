import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IterscopeError } from '../../src/errors.js';
import { analyzeMany, workerCount } from '../../src/ranks/pool.js';
import { runTask } from '../../src/ranks/tasks.js';
import { parseIterationLogFile } from '../../src/logs/parse.js';
import { runCli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';

const rank0 = fixture('pytorch-tp2', 'trace.rank0.sqlite');
const rank1 = fixture('pytorch-tp2', 'trace.rank1.sqlite');
const log0 = fixture('pytorch-tp2', 'iteration_log.rank0.txt');

describe('analyzeMany (worker threads)', () => {
  it('returns worker results identical to in-process results, in input order', async () => {
    const files = [rank1, rank0];
    const progress: string[] = [];
    const viaWorkers = await analyzeMany(files, 'rankFigures', { jobs: 2, onProgress: (_d, _t, f) => progress.push(f) });
    const inProcess = files.map((f) => runTask('rankFigures', f));
    expect(viaWorkers).toStrictEqual(inProcess);
    expect(viaWorkers.map((r) => r[0].file)).toEqual(files);
    expect(progress.sort()).toEqual([...files].sort());
    // bigint and typed arrays survive the structured clone.
    expect(typeof viaWorkers[0][0].sessionStartUtcNs).toBe('bigint');
    expect(viaWorkers[0][0].collectives!.startNs).toBeInstanceOf(Float64Array);
  });

  it('runs the iterations task (logs and category rules cross as data) like the in-process analysis', async () => {
    const { parseIterationLogFile } = await import('../../src/logs/parse.js');
    const logs = [parseIterationLogFile(log0)];
    const [w] = await analyzeMany([rank0, rank1], 'iterations', { logs, jobs: 2 });
    const local = runTask('iterations', rank0, { logs });
    expect(w.analysis).toStrictEqual(local.analysis);
    expect(w.analysis.coverage.joined).toBe(40);
  });

  it('a bad file fails with an IterscopeError naming it (exit 2 in the CLI)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'iterscope-pool-'));
    const bad = join(dir, 'trace.rank1.sqlite');
    writeFileSync(bad, 'this is not SQLite at all, just text '.repeat(200));
    const err = await analyzeMany([rank0, bad], 'rankFigures', { jobs: 2 }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(IterscopeError);
    expect((err as IterscopeError).code).toBe('E_NOT_SQLITE');
    expect((err as IterscopeError).file).toBe(bad);
    expect((err as Error).message.startsWith(`${bad}: `)).toBe(true);
  });

  it('several failures: the error of the first failing export in input order, whichever worker fails first', async () => {
    // Text fails as the file opens; the real export (nsys-ai's, no iteration ranges) after it is read.
    const dir = mkdtempSync(join(tmpdir(), 'iterscope-pool-'));
    const text = join(dir, 'trace.rank1.sqlite');
    writeFileSync(text, 'this is not SQLite at all, just text '.repeat(200));
    const noRanges = fixture('external', 'nsys2026.2_mfu_2gpu_before_nsysai.sqlite');
    const failure = (files: string[]) => analyzeMany(files, 'iterations', { jobs: 2 }).then(() => null, (e: unknown) => e as IterscopeError);
    for (let round = 0; round < 3; round++) {
      const err = await failure([noRanges, text]);
      expect(err).toBeInstanceOf(IterscopeError);
      expect(err!.file).toBe(noRanges);
      expect(err!.message).toContain('no iteration ranges found');
    }
    const reversed = await failure([text, noRanges]);
    expect(reversed!.file).toBe(text);
    expect(reversed!.code).toBe('E_NOT_SQLITE');
  });

  it('the iterations task skips the per-phase summary when told (phases: false), and only it', () => {
    const logs = [parseIterationLogFile(log0)];
    const full = runTask('iterations', rank0, { logs });
    const lean = runTask('iterations', rank0, { logs, phases: false });
    expect(full.phases.map((p) => p.phase)).toEqual(['mixed', 'generation']);
    expect(full.phases.reduce((n, p) => n + p.iterations, 0)).toBe(40);
    expect(lean.phases).toEqual([]);
    expect(lean.analysis).toStrictEqual(full.analysis);
    // (metrics.ms is the clock's, not the export's)
    expect({ ...lean.metrics, ms: 0 }).toStrictEqual({ ...full.metrics, ms: 0 });
  });

  it('never starts more workers than exports or jobs', () => {
    expect(workerCount(1)).toBe(1);
    expect(workerCount(8, 2)).toBe(2);
    expect(workerCount(3, 16)).toBe(3);
  });
});

describe('several exports on the command line', () => {
  it('iterations a b: one worker per export, a Rank column, logs applied to every rank', () => {
    const r = runCli(['iterations', rank0, rank1, '--log', log0, '--format', 'csv']);
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0].startsWith('Rank,Iter,Phase,')).toBe(true);
    expect(lines).toHaveLength(81);
    expect(lines.filter((l) => l.startsWith('0,')).length).toBe(40);
    expect(lines.filter((l) => l.startsWith('1,')).length).toBe(40);
    expect(r.stderr).toContain('ranks from the file names (rank<N>): 0, 1');
    expect(r.stderr).toContain('rank 1: 40 of 40 iterations joined');
  });

  it('iterations a b --summary: the phases of every rank (each worker computes them only then)', () => {
    const r = runCli(['iterations', rank0, rank1, '--log', log0, '--summary', '--format', 'json']);
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { ranks: { rank: number; phases: { phase: string; iterations: number }[] }[] };
    expect(out.ranks.map((x) => x.rank)).toEqual([0, 1]);
    for (const x of out.ranks) expect(x.phases.reduce((n, p) => n + p.iterations, 0)).toBe(40);
  });

  it('iterations with one export prints exactly what it printed before (no Rank column)', () => {
    const one = runCli(['iterations', rank0, '--format', 'csv']);
    expect(one.status).toBe(0);
    expect(one.stdout.startsWith('Iter,Phase,')).toBe(true);
  });

  it('a quoted glob works for gaps, and the top gaps are ranked over all ranks', () => {
    const dir = mkdtempSync(join(tmpdir(), 'iterscope-glob-'));
    copyFileSync(rank0, join(dir, 'trace.rank0.sqlite'));
    copyFileSync(rank1, join(dir, 'trace.rank1.sqlite'));
    const r = runCli(['gaps', join(dir, 'trace.rank*.sqlite'), '--top', '5', '--format', 'json']);
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.rankSource).toBe('file-name');
    expect(out.ranks.map((x: { rank: number }) => x.rank)).toEqual([0, 1]);
    expect(out.ranks[1].gaps.length).toBeGreaterThan(0);
  });

  it('a bad export among several: one line naming it, exit 2', () => {
    const dir = mkdtempSync(join(tmpdir(), 'iterscope-badrank-'));
    const bad = join(dir, 'trace.rank1.sqlite');
    writeFileSync(bad, Buffer.alloc(8192, 7));
    for (const command of ['iterations', 'gaps']) {
      const r = runCli([command, rank0, bad, '--format', 'csv']);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stdout).toBe('');
      const errLines = r.stderr.trim().split('\n').filter((l) => !l.startsWith('iterscope: ranks '));
      expect(errLines, r.stderr).toHaveLength(1);
      expect(errLines[0].startsWith(`iterscope: ${bad}: `), errLines[0]).toBe(true);
      expect(r.stderr).not.toMatch(/^\s+at /m);
    }
  });
});
