import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { parseCsv } from '../helpers/csv.js';
import { fixture } from '../helpers/fixtures.js';

const rank0 = fixture('pytorch-tp2', 'trace.rank0.sqlite');
const rank1 = fixture('pytorch-tp2', 'trace.rank1.sqlite');

/**
 * `cmd` on both tp2 ranks at once (worker threads) equals `cmd` on each alone: the stacked CSV is
 * the single-export header behind a Rank column, then rank 0's rows, then rank 1's.
 */
function expectStackedEqualsSingles(args: string[], files: [string, string] = [rank0, rank1]): string[][] {
  const both = runCli([...args.slice(0, 1), ...files, ...args.slice(1), '--format', 'csv']);
  expect(both.status, both.stderr).toBe(0);
  const singles = files.map((f) => {
    const r = runCli([...args.slice(0, 1), f, ...args.slice(1), '--format', 'csv']);
    expect(r.status, r.stderr).toBe(0);
    return parseCsv(r.stdout);
  });
  const stacked = parseCsv(both.stdout);
  expect(stacked[0]).toEqual(['Rank', ...singles[0][0]]);
  const expected = singles.flatMap((rows, rank) => rows.slice(1).map((row) => [String(rank), ...row]));
  expect(stacked.slice(1)).toEqual(expected);
  expect(singles[0].length).toBeGreaterThan(1);
  return stacked;
}

describe('kernels / nvtx / metrics on several exports (one worker thread per export, a Rank column)', () => {
  it('kernels: both tp2 ranks stacked equal each rank alone (nsys cuda_gpu_kern_sum columns)', () => {
    const rows = expectStackedEqualsSingles(['kernels']);
    // Both ranks ran the same kernels: every kernel name shows up once per rank.
    const names = (rank: string) => rows.slice(1).filter((r) => r[0] === rank).map((r) => r[r.length - 1]).sort();
    expect(names('0')).toEqual(names('1'));
  });

  it('nvtx and nvtx --gpu: both ranks stacked equal each rank alone', () => {
    expectStackedEqualsSingles(['nvtx']);
    expectStackedEqualsSingles(['nvtx', '--gpu']);
  });

  it('JSON: one entry per rank with its file and the single-export result', () => {
    const r = runCli(['kernels', rank0, rank1, '--format', 'json']);
    expect(r.status, r.stderr).toBe(0);
    const v = JSON.parse(r.stdout);
    expect(v.rankSource).toBe('file-name');
    expect(v.ranks.map((x: { rank: number; file: string }) => [x.rank, x.file])).toEqual([
      [0, rank0],
      [1, rank1],
    ]);
    const single = JSON.parse(runCli(['kernels', rank1, '--format', 'json']).stdout);
    const { rank: _r, file: _f, ...rest } = v.ranks[1];
    expect(rest).toEqual(single);
  });

  it('info: JSON per rank equals info on that export alone; CSV has the Rank column', () => {
    const r = runCli(['info', rank0, rank1, '--format', 'json']);
    expect(r.status, r.stderr).toBe(0);
    const v = JSON.parse(r.stdout);
    for (const [i, f] of [rank0, rank1].entries()) {
      // ExportInfo names its file itself.
      const { rank, ...rest } = v.ranks[i];
      expect([rank, rest.file]).toEqual([i, f]);
      expect(rest).toEqual(JSON.parse(runCli(['info', f, '--format', 'json']).stdout));
    }
    const csv = runCli(['info', rank0, rank1, '--format', 'csv']);
    expect(csv.status, csv.stderr).toBe(0);
    // Several tables: each after its `# title (2 ranks)` line, its header starting with Rank.
    const lines = csv.stdout.split('\n');
    const titles = lines.filter((l) => l.startsWith('# '));
    expect(titles.length).toBeGreaterThan(1);
    for (const t of titles) expect(t).toMatch(/\(2 ranks\)$/);
    for (const [i, l] of lines.entries()) if (l.startsWith('# ')) expect(lines[i + 1].startsWith('Rank,')).toBe(true);
  });

  describe('metrics', () => {
    const dir = mkdtempSync(join(tmpdir(), 'iterscope-metrics-ranks-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const src = fixture('pytorch-gpu-metrics', 'trace.sqlite');
    const files: [string, string] = [join(dir, 'trace.rank0.sqlite'), join(dir, 'trace.rank1.sqlite')];
    for (const f of files) symlinkSync(src, f);

    it('over the capture and over --iters windows with --log, per rank, as the single export', () => {
      expectStackedEqualsSingles(['metrics'], files);
      expectStackedEqualsSingles(['metrics', '--iters', '10-19', '--log', fixture('pytorch-gpu-metrics', 'iteration_log.txt')], files);
    });

    it('a bad --iters is a usage error before any export is read (exit 2, one line)', () => {
      const r = runCli(['metrics', ...files, '--iters', 'x-y']);
      expect(r.status).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain('--iters');
    });
  });
});
